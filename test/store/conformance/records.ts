/** Conformance: records written and read back by UID and by value, references counted, sequences. */
import { describe, expect, test } from "bun:test";
import type { FieldDef, ObjectDef } from "../../../api/model/catalogue.ts";
import type { RecordValues } from "../../../api/model/record-values.ts";
import { listAll, newRecord, type SeededTenant, seedTenant } from "./fixtures.ts";
import type { StoreUnderTest } from "./store-under-test.ts";

const fieldOf = (object: ObjectDef, name: string): FieldDef => {
  const field = object.fields.find((candidate) => candidate.name === name);
  if (!field) throw new Error(`${object.name} has no ${name}`);
  return field;
};

export function describeRecords(sut: StoreUnderTest): void {
  describe("records", () => {
    let seeded: SeededTenant;

    test("every column type round-trips, at its edges, and as null", async () => {
      seeded = await seedTenant(sut.store);
      const { tenant: t, catalogue, user: by } = seeded;
      const { owners, things } = catalogue;
      const owner = newRecord(owners, by.id, { Name: "o", Code: "c", Score: -7 });
      const written: RecordValues[] = [
        {
          Name: "plain ascii",
          // U+0000 aside: not every engine's text holds it (constraints.ts).
          Note: `${"long text ".repeat(2000)}\n\ttabs, 'quotes', "double", \\ back, \u0001 soh`,
          Link: "https://example.com/a?b=c&d=é#f",
          Count: 2147483647,
          Minutes: 0,
          Price: "12345678901234.56",
          Flag: true,
          Day: "2024-02-29",
          At: Date.UTC(2024, 1, 29, 23, 59, 59, 999),
          Clock: "23:59:59.999",
          Kind: "Alpha",
          Tags: ["red", "blue sky"],
          Owner: owner.UID as string,
        },
        {
          Name: "ünïcödé \u{1F600} 中文",
          Note: "",
          Link: "http://x",
          Count: -2147483648,
          Minutes: 2 ** 31 - 1,
          Price: "-0.01",
          Flag: false,
          Day: "0001-01-01",
          At: -62135596800000,
          Clock: "00:00:00.000",
          Kind: "Gamma",
          Tags: [],
          Owner: null,
        },
        { Price: "0", Tags: ["Green"], Count: 0 },
        {},
      ];
      const full = written.map((values) => newRecord(things, by.id, values));
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertRecord(t.id, owners, owner);
        for (const record of full) await tx.insertRecord(t.id, things, record);
      });
      const read = await sut.store.findRecords(
        t.id,
        things,
        full.map((r) => r.UID as string),
      );
      const byUid = (records: RecordValues[]) =>
        records.toSorted((a, b) => String(a.UID).localeCompare(String(b.UID)));
      expect(byUid(read)).toEqual(byUid(full));
      expect(await sut.store.findRecords(t.id, owners, [owner.UID as string])).toEqual([owner]);
      // The same read inside a unit of work.
      const inside = await sut.store.unitOfWork((tx) =>
        tx.findRecords(t.id, things, [full[1]?.UID as string]),
      );
      expect(inside).toEqual([full[1] as RecordValues]);
    });

    test("by UID: only those that exist, only the fields asked for, only the tenant's", async () => {
      seeded = await seedTenant(sut.store);
      const { tenant: t, catalogue, user: by } = seeded;
      const { owners } = catalogue;
      const a = newRecord(owners, by.id, { Name: "a", Score: 1 });
      const b = newRecord(owners, by.id, { Name: "b", Score: 2 });
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertRecord(t.id, owners, a);
        await tx.insertRecord(t.id, owners, b);
      });
      expect(await sut.store.findRecords(t.id, owners, [])).toEqual([]);
      expect(await sut.store.findRecords(t.id, owners, [crypto.randomUUID(), b.UID as string])).toEqual([b]);
      const fields = [fieldOf(owners, "UID"), fieldOf(owners, "Score")];
      const some = await sut.store.findRecords(t.id, owners, [a.UID as string, b.UID as string], fields);
      expect(some.toSorted((x, y) => (x.Score as number) - (y.Score as number))).toEqual([
        { UID: a.UID as string, Score: 1 },
        { UID: b.UID as string, Score: 2 },
      ]);
      const other = await seedTenant(sut.store, "other");
      expect(await sut.store.findRecords(other.tenant.id, other.catalogue.owners, [a.UID as string])).toEqual(
        [],
      );
    });

    test("by value: the record with it, other than the one excepted, null when none", async () => {
      seeded = await seedTenant(sut.store);
      const { tenant: t, catalogue, user: by } = seeded;
      const { owners, things } = catalogue;
      const code = fieldOf(owners, "Code");
      const a = newRecord(owners, by.id, { Name: "a", Code: "k-1" });
      const thing = newRecord(things, by.id, { Name: "t", Tags: ["red"], Price: "2.5" });
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertRecord(t.id, owners, a);
        await tx.insertRecord(t.id, things, thing);
      });
      expect(await sut.store.findRecordByValue(t.id, owners, code, "k-1")).toEqual(a);
      expect(await sut.store.findRecordByValue(t.id, owners, code, "K-1")).toBeNull();
      expect(await sut.store.findRecordByValue(t.id, owners, code, "k-1", a.UID as string)).toBeNull();
      expect(await sut.store.findRecordByValue(t.id, owners, code, "k-2")).toBeNull();
      expect(await sut.store.findRecordByValue(t.id, things, fieldOf(things, "Price"), "2.5")).toEqual(thing);
      expect(await sut.store.unitOfWork((tx) => tx.findRecordByValue(t.id, owners, code, "k-1"))).toEqual(a);
    });

    test("updates set only the given fields; deletes remove the record; missing ones are no error", async () => {
      seeded = await seedTenant(sut.store);
      const { tenant: t, catalogue, user: by } = seeded;
      const { owners, things } = catalogue;
      const owner = newRecord(owners, by.id, { Name: "o" });
      const thing = newRecord(things, by.id, {
        Name: "before",
        Count: 1,
        Tags: ["red"],
        Owner: owner.UID as string,
      });
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertRecord(t.id, owners, owner);
        await tx.insertRecord(t.id, things, thing);
      });
      const owner2 = newRecord(owners, by.id, { Name: "o2" });
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertRecord(t.id, owners, owner2);
        await tx.updateRecord(t.id, things, thing.UID as string, {
          Name: "after",
          Tags: ["Green", "red"],
          Flag: false,
          Owner: owner2.UID as string,
        });
        await tx.updateRecord(t.id, things, thing.UID as string, {});
        await tx.updateRecord(t.id, things, crypto.randomUUID(), { Name: "nobody" });
      });
      const [updated] = await sut.store.findRecords(t.id, things, [thing.UID as string]);
      expect(updated).toEqual({
        ...thing,
        Name: "after",
        Tags: ["Green", "red"],
        Flag: false,
        Owner: owner2.UID as string,
      });

      await sut.store.unitOfWork(async (tx) => {
        await tx.deleteRecord(t.id, things, thing.UID as string);
        await tx.deleteRecord(t.id, things, crypto.randomUUID());
      });
      expect(await sut.store.findRecords(t.id, things, [thing.UID as string])).toEqual([]);
      expect((await listAll(sut.store, catalogue, owners)).length).toBe(2);
    });

    test("references are counted per source field and target", async () => {
      seeded = await seedTenant(sut.store);
      const { tenant: t, catalogue, user: by } = seeded;
      const { owners, things } = catalogue;
      const a = newRecord(owners, by.id, { Name: "a" });
      const b = newRecord(owners, by.id, { Name: "b", Parent: a.UID as string });
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertRecord(t.id, owners, a);
        await tx.insertRecord(t.id, owners, b);
        for (const owner of [a, a, b, null])
          await tx.insertRecord(
            t.id,
            things,
            newRecord(things, by.id, { Owner: (owner?.UID as string) ?? null }),
          );
      });
      const owner = fieldOf(things, "Owner");
      expect(await sut.store.countReferencing(t.id, things, owner, a.UID as string)).toBe(2);
      expect(await sut.store.countReferencing(t.id, things, owner, b.UID as string)).toBe(1);
      expect(await sut.store.countReferencing(t.id, owners, fieldOf(owners, "Parent"), a.UID as string)).toBe(
        1,
      );
      expect(await sut.store.countReferencing(t.id, things, owner, crypto.randomUUID())).toBe(0);
      const countedInside = await sut.store.unitOfWork((tx) =>
        tx.countReferencing(t.id, owners, fieldOf(owners, "CreatedBy"), by.id),
      );
      expect(countedInside).toBe(2);
    });

    test("sequences count from 1 per tenant and name; committed values are never handed out again", async () => {
      seeded = await seedTenant(sut.store);
      const other = await seedTenant(sut.store, "other");
      const t = seeded.tenant.id;
      const next = (tenantId: string, name: string) =>
        sut.store.unitOfWork((tx) => tx.nextSequenceValue(tenantId, name));
      expect(await next(t, "jobs")).toBe(1);
      expect(await next(t, "jobs")).toBe(2);
      expect(await next(t, "quotes")).toBe(1);
      expect(await next(other.tenant.id, "jobs")).toBe(1);
      const inOneUnit = await sut.store.unitOfWork(async (tx) => [
        await tx.nextSequenceValue(t, "jobs"),
        await tx.nextSequenceValue(t, "jobs"),
      ]);
      expect(inOneUnit).toEqual([3, 4]);
      await sut.store
        .unitOfWork(async (tx) => {
          await tx.nextSequenceValue(t, "jobs");
          throw new Error("rolled back");
        })
        .catch(() => undefined);
      expect(await next(t, "jobs")).toBeGreaterThan(4);
      const concurrent = await Promise.all(Array.from({ length: 8 }, () => next(t, "tickets")));
      expect(concurrent.toSorted((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    });
  });
}
