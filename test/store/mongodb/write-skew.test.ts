/**
 * The write-skew plan of the MongoDB engine (api/store/mongodb/write-skew.ts), pure: for each
 * check-then-act pair that snapshot isolation would let both commit, the two sides write one
 * common document (so the second meets a write conflict and runs again), and the plan names it;
 * writes that must not wait on each other share none — above all, writes referring to one record
 * (every write of one user names the user's Users record) meet only when their UIDs share a gate.
 * What a server does with the plan (the write conflict itself) is proven nowhere here.
 */
import { describe, expect, test } from "bun:test";
import {
  conflictingDocuments,
  GATES,
  type GuardedWrite,
  gateOf,
  guardUpdates,
  type PlannedObject,
  releasedGates,
} from "../../../api/store/mongodb/write-skew.ts";
import { COLLECTION } from "../../../common/store/mongodb/layout.ts";

const regions = { id: "object-regions", custom: false };
const jobs = { id: "object-jobs", custom: false };
const widgets = { id: "object-widgets", custom: true };

const deleteRegion = (uid = "region-1", tenantId = "tenant-a"): GuardedWrite => ({
  kind: "deleteRecord",
  tenantId,
  object: regions,
  uid,
});
const insertJobIn = (region: string, uid = "job-1", tenantId = "tenant-a"): GuardedWrite => ({
  kind: "writeRecord",
  tenantId,
  object: jobs,
  uid,
  references: [{ object: regions, uid: region }],
});
const changeCatalogue = (objects = [widgets], tenantId = "tenant-a"): GuardedWrite => ({
  kind: "changeCatalogue",
  tenantId,
  objects,
});
const writeWidget = (uid: string, tenantId = "tenant-a"): GuardedWrite => ({
  kind: "writeRecord",
  tenantId,
  object: widgets,
  uid,
  references: [],
});

/** Two UIDs whose writes fall in different gates. */
const [uidA, uidB] = (() => {
  const uids = Array.from({ length: 10 }, (_, i) => `widget-${i}`);
  const first = uids[0] as string;
  const second = uids.find((uid) => gateOf(uid) !== gateOf(first)) as string;
  return [first, second];
})();

const users = { id: "object-users", custom: false };
/** A record write by user `by`: CreatedBy and LastModifiedBy name the user's Users record, as every write of the service does. */
const writeBy = (by: string, object: PlannedObject, uid: string): GuardedWrite => ({
  kind: "writeRecord",
  tenantId: "tenant-a",
  object,
  uid,
  references: [
    { object: users, uid: by },
    { object: users, uid: by },
  ],
});
const deleteUser = (uid: string): GuardedWrite => ({
  kind: "deleteRecord",
  tenantId: "tenant-a",
  object: users,
  uid,
});

/** The reference gate of record `uid` of `object` that writes of `writer` take. */
const referenceGate = (object: PlannedObject, uid: string, writer: string) => ({
  collection: COLLECTION.referenceGates,
  filter: { _id: { t: "tenant-a", o: object.id, u: uid, g: gateOf(writer) } },
});

describe("write skew closed by a common document", () => {
  test("delete vs referring write: both write the parent's reference gate of the child's UID", () => {
    expect(conflictingDocuments(deleteRegion(), insertJobIn("region-1"))).toEqual([
      referenceGate(regions, "region-1", "job-1"),
    ]);
    // The child's write increments that gate, upserted (the first writer creates it): an update that
    // always changes it (a no-op would not conflict). The parent's own document it does not write.
    expect(guardUpdates(insertJobIn("region-1"))).toContainEqual({
      ...referenceGate(regions, "region-1", "job-1"),
      update: { $inc: { n: 1 } },
      upsert: true,
    });
    expect(guardUpdates(insertJobIn("region-1")).map((guard) => guard.collection)).not.toContain(
      COLLECTION.standardRecords,
    );
  });

  test("a delete takes every reference gate of its record, and releases (deletes) exactly those", () => {
    const taken = guardUpdates(deleteRegion()).filter(
      (guard) => guard.collection === COLLECTION.referenceGates,
    );
    expect(taken).toHaveLength(GATES);
    for (const guard of taken) expect(guard).toMatchObject({ update: { $inc: { n: 1 } }, upsert: true });
    const ids = taken.map((guard) => guard.filter._id);
    expect(new Set(ids.map((id) => JSON.stringify(id))).size).toBe(GATES);
    expect(releasedGates("tenant-a", regions, "region-1")).toEqual({
      collection: COLLECTION.referenceGates,
      filter: { _id: { $in: ids } },
    });
    // Whatever record refers to the parent, its write meets the delete at one gate.
    for (let i = 0; i < 500; i++)
      expect(conflictingDocuments(deleteRegion(), insertJobIn("region-1", `job-${i}`))).toEqual([
        referenceGate(regions, "region-1", `job-${i}`),
      ]);
  });

  test("two writes by one user name no common document (their UIDs in different gates), while a delete of the user meets each", () => {
    const first = writeBy("user-1", jobs, uidA);
    const second = writeBy("user-1", jobs, uidB);
    expect(conflictingDocuments(first, second)).toEqual([]);
    expect(conflictingDocuments(writeBy("user-1", regions, uidA), second)).toEqual([]);
    expect(conflictingDocuments(deleteUser("user-1"), first)).toEqual([referenceGate(users, "user-1", uidA)]);
    expect(conflictingDocuments(deleteUser("user-1"), second)).toEqual([
      referenceGate(users, "user-1", uidB),
    ]);
    // CreatedBy and LastModifiedBy name one record: one gate write, not two.
    expect(
      guardUpdates(first).filter((guard) => guard.collection === COLLECTION.referenceGates),
    ).toHaveLength(1);
  });

  test("32 concurrent writes by one user (the benchmarks' shape), of two objects: only pairs whose UIDs share a gate meet, about 1 in GATES", () => {
    const writes = Array.from({ length: 32 }, (_, i) =>
      writeBy("user-1", i % 2 === 0 ? jobs : regions, `record-${i}`),
    );
    let meeting = 0;
    let sameGate = 0;
    for (let i = 0; i < writes.length; i++)
      for (let j = i + 1; j < writes.length; j++) {
        const [a, b] = [writes[i] as GuardedWrite, writes[j] as GuardedWrite];
        if (conflictingDocuments(a, b).length > 0) meeting++;
        if (a.kind === "writeRecord" && b.kind === "writeRecord" && gateOf(a.uid) === gateOf(b.uid))
          sameGate++;
      }
    // Of the 496 pairs (all of which met at the user's record before), those sharing a gate (for
    // writes of one object its object gate already makes them meet): expected 496 / 64 = 7.75.
    expect(meeting).toBe(sameGate);
    expect(meeting).toBeLessThanOrEqual(16);
  });

  test("two catalogue changes of a tenant: both write its catalogue counter", () => {
    const common = conflictingDocuments(changeCatalogue([]), changeCatalogue([widgets]));
    expect(common).toEqual([
      { collection: COLLECTION.counters, filter: { _id: { t: "tenant-a", k: "catalogue" } } },
    ]);
  });

  test("a catalogue change of an object vs a write of one of its records: both write the record's gate", () => {
    const common = conflictingDocuments(changeCatalogue([widgets]), writeWidget(uidA));
    expect(common).toEqual([
      {
        collection: COLLECTION.writeGates,
        filter: { _id: { t: "tenant-a", o: "object-widgets", g: gateOf(uidA) } },
      },
    ]);
    // The change takes every gate of the object, whichever record the write is of.
    expect(guardUpdates(changeCatalogue([widgets]))).toHaveLength(GATES);
  });

  test("writes that must not wait on each other share no document", () => {
    // Other tenants, other parents, other objects, records in other gates.
    expect(
      conflictingDocuments(
        deleteRegion("region-1", "tenant-a"),
        insertJobIn("region-1", "job-1", "tenant-b"),
      ),
    ).toEqual([]);
    expect(conflictingDocuments(deleteRegion("region-2"), insertJobIn("region-1"))).toEqual([]);
    expect(conflictingDocuments(changeCatalogue([widgets]), insertJobIn("region-1"))).toEqual([]);
    expect(conflictingDocuments(changeCatalogue([], "tenant-a"), changeCatalogue([], "tenant-b"))).toEqual(
      [],
    );
    expect(conflictingDocuments(writeWidget(uidA), writeWidget(uidB))).toEqual([]);
    expect(conflictingDocuments(insertJobIn("region-1", uidA), insertJobIn("region-1", uidB))).toEqual([]);
  });

  test("a record referring to itself adds no guard on itself (the write is that record's already)", () => {
    const self: GuardedWrite = {
      kind: "writeRecord",
      tenantId: "tenant-a",
      object: regions,
      uid: "region-1",
      references: [{ object: regions, uid: "region-1" }],
    };
    expect(guardUpdates(self).map((update) => update.collection)).toEqual([COLLECTION.writeGates]);
  });

  test("gates spread UIDs: 10,000 random UIDs fill every gate, none with more than twice its share", () => {
    const counts = new Array<number>(GATES).fill(0);
    for (let i = 0; i < 10_000; i++) {
      const gate = gateOf(crypto.randomUUID());
      counts[gate] = (counts[gate] ?? 0) + 1;
    }
    expect(Math.min(...counts)).toBeGreaterThan(0);
    expect(Math.max(...counts)).toBeLessThan((2 * 10_000) / GATES);
  });
});
