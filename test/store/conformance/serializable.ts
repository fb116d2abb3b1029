/**
 * Conformance: units of work are serializable. Each test races units of work
 * that check then act (read-modify-write, look up then insert, count then
 * delete), each yielding between the check and the act so that an engine
 * running them side by side has every chance to interleave them; the outcome
 * must be one some serial order of them gives.
 */
import { describe, expect, test } from "bun:test";
import { listAll, newRecord, type SeededTenant, seedTenant } from "./fixtures.ts";
import type { StoreUnderTest } from "./store-under-test.ts";

/** Lets other units of work run (a timer, not a microtask: an engine's I/O gets its turn). */
const yieldTurn = () => new Promise((resolve) => setTimeout(resolve, 1));
const RACERS = 12;

export function describeSerializable(sut: StoreUnderTest): void {
  describe("units of work are serializable", () => {
    let seeded: SeededTenant;
    const ids = () => seeded.catalogue;

    test("concurrent read-modify-write units on one counter end with the exact sum", async () => {
      seeded = await seedTenant(sut.store);
      const { tenantId, things } = ids();
      const counter = newRecord(things, seeded.user.id, { Name: "counter", Count: 0 });
      await sut.store.unitOfWork((tx) => tx.insertRecord(tenantId, things, counter));
      const uid = counter.UID as string;
      await Promise.all(
        Array.from({ length: RACERS }, () =>
          sut.store.unitOfWork(async (tx) => {
            const [current] = await tx.findRecords(tenantId, things, [uid]);
            await yieldTurn();
            await tx.updateRecord(tenantId, things, uid, { Count: (current?.Count as number) + 1 });
          }),
        ),
      );
      const [after] = await sut.store.findRecords(tenantId, things, [uid]);
      expect(after?.Count).toBe(RACERS);
    });

    test("concurrent upserts of one key leave one record, holding every upsert's increment", async () => {
      seeded = await seedTenant(sut.store);
      const { tenantId, owners } = ids();
      const code = owners.fields.find((field) => field.name === "Code");
      if (!code) throw new Error("Owners has no Code");
      await Promise.all(
        Array.from({ length: RACERS }, () =>
          sut.store.unitOfWork(async (tx) => {
            const existing = await tx.findRecordByValue(tenantId, owners, code, "k-1");
            await yieldTurn();
            if (existing)
              await tx.updateRecord(tenantId, owners, existing.UID as string, {
                Score: (existing.Score as number) + 1,
              });
            else
              await tx.insertRecord(
                tenantId,
                owners,
                newRecord(owners, seeded.user.id, { Code: "k-1", Score: 1 }),
              );
          }),
        ),
      );
      const all = await listAll(sut.store, seeded.catalogue, owners);
      expect(all.map((record) => [record.Code, record.Score])).toEqual([["k-1", RACERS]]);
    });

    // The normal load of one client: one token (one user) writing over many connections at once (the
    // benchmarks use 32). Every write names the user's Users record (CreatedBy, LastModifiedBy), and
    // here one parent too; writes referring to one record must not all wait on each other (an engine
    // whose every such write wrote the referred record would run them again and again, one commit a
    // round, some past the unit of work's runs: UNAVAILABLE).
    test("32 concurrent inserts by one user under one parent all commit", async () => {
      seeded = await seedTenant(sut.store);
      const { tenantId, owners, things } = ids();
      const parent = newRecord(owners, seeded.user.id, { Name: "popular" });
      await sut.store.unitOfWork((tx) => tx.insertRecord(tenantId, owners, parent));
      const outcomes = await Promise.allSettled(
        Array.from({ length: 32 }, (_, i) =>
          sut.store.unitOfWork(async (tx) => {
            const [found] = await tx.findRecords(tenantId, owners, [parent.UID as string]);
            await yieldTurn();
            if (found)
              await tx.insertRecord(
                tenantId,
                things,
                newRecord(things, seeded.user.id, { Name: `child ${i}`, Owner: parent.UID as string }),
              );
          }),
        ),
      );
      expect(outcomes.filter((outcome) => outcome.status === "rejected")).toEqual([]);
      expect(await listAll(sut.store, seeded.catalogue, things)).toHaveLength(32);
    });

    test("a delete racing a child insert leaves no dangling reference", async () => {
      seeded = await seedTenant(sut.store);
      const { tenantId, owners, things } = ids();
      const ownerField = things.fields.find((field) => field.name === "Owner");
      if (!ownerField) throw new Error("Things has no Owner");
      for (let round = 0; round < 4; round++) {
        const parent = newRecord(owners, seeded.user.id, { Name: `parent ${round}` });
        const parentUid = parent.UID as string;
        await sut.store.unitOfWork((tx) => tx.insertRecord(tenantId, owners, parent));
        // Each checks, yields, then acts on what it saw: the delete only an unreferenced parent, the insert only under an existing one.
        const remove = sut.store.unitOfWork(async (tx) => {
          const children = await tx.countReferencing(tenantId, things, ownerField, parentUid);
          await yieldTurn();
          if (children === 0) await tx.deleteRecord(tenantId, owners, parentUid);
        });
        const insert = sut.store.unitOfWork(async (tx) => {
          const [found] = await tx.findRecords(tenantId, owners, [parentUid]);
          await yieldTurn();
          if (found)
            await tx.insertRecord(tenantId, things, newRecord(things, seeded.user.id, { Owner: parentUid }));
        });
        await Promise.all(round % 2 === 0 ? [remove, insert] : [insert, remove]);
        const [stillThere] = await sut.store.findRecords(tenantId, owners, [parentUid]);
        const referencing = await sut.store.countReferencing(tenantId, things, ownerField, parentUid);
        // Either the parent stays (with its child, or without), or it is gone and nothing points at it.
        const dangling = stillThere ? 0 : referencing;
        expect(dangling).toBe(0);
      }
    });
  });
}
