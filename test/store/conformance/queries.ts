/**
 * Conformance: filtered lists, counts and children of many parents, with
 * filters built by EQL's own parser and checker (api/eql) and their results
 * checked against EQL's in-memory evaluator; fields read and lookups joined.
 */
import { describe, expect, test } from "bun:test";
import { prepareFilter } from "../../../api/eql/check-filter.ts";
import { type EvaluationContext, evaluateFilter } from "../../../api/eql/evaluate-filter.ts";
import { parseOrderBy } from "../../../api/eql/parse-order-by.ts";
import type { FieldDef, ObjectDef } from "../../../api/model/catalogue.ts";
import type { RecordValues } from "../../../api/model/record-values.ts";
import { LOOKUPS, type WithLookups } from "../../../api/store/store.ts";
import { newRecord, type SeededTenant, seedTenant } from "./fixtures.ts";
import type { StoreUnderTest } from "./store-under-test.ts";

const NOW = Date.UTC(2024, 4, 1, 12);
const HOUR = 3_600_000;

const FILTERS = [
  "Name == 'b'",
  "Name != 'b'",
  "Name LIKE 'a%'",
  "Name NOTLIKE '%b'",
  "Count > 1 AND Count <= 3",
  "Count == null OR Flag == false",
  "NOT (Count IN [1, 3])",
  "Price >= 2.5",
  "Tags INCLUDES ['red']",
  "Tags EXCLUDES ['red', 'Green']",
  "Kind NOTIN ['Alpha', null]",
  "At > NOW() - 3 h",
  "At < NOW()",
  "Day >= 2024-03-01",
  "Clock < 12:00",
  "Owner.Name == 'root' OR Owner.Parent.Name == 'root'",
  "Owner.Score > 1",
  "OwnerId == null",
  "OwnerId IN (SELECT UID FROM Owners WHERE Score != null)",
];

const fieldOf = (object: ObjectDef, name: string): FieldDef => {
  const field = object.fields.find((candidate) => candidate.name === name);
  if (!field) throw new Error(`${object.name} has no ${name}`);
  return field;
};

export function describeQueries(sut: StoreUnderTest): void {
  describe("filtered lists, counts and children", () => {
    let seeded: SeededTenant;
    let owners: RecordValues[];
    let things: RecordValues[];
    let context: EvaluationContext;

    async function seedRecords(): Promise<void> {
      seeded = await seedTenant(sut.store);
      const { catalogue, user: by } = seeded;
      const root = newRecord(catalogue.owners, by.id, { Name: "root", Score: 5 });
      owners = [
        root,
        newRecord(catalogue.owners, by.id, { Name: "leaf", Score: 1, Parent: root.UID as string }),
        newRecord(catalogue.owners, by.id, { Name: null, Score: null }),
      ];
      const names = ["a", "b", "ab", null, "B", "ba"];
      things = names.map((name, i) =>
        newRecord(catalogue.things, by.id, {
          Name: name,
          Count: i === 3 ? null : i,
          Price: i % 2 === 0 ? `${i}.5` : null,
          Flag: i % 3 === 0 ? null : i % 3 === 1,
          Tags: [[], ["red"], ["Green", "red"], null, ["blue sky"], ["Green"]][i] ?? null,
          Kind: ["Alpha", "beta", null, "Gamma", "Alpha", null][i] ?? null,
          At: NOW - i * HOUR,
          Day: `2024-0${i + 1}-15`,
          Clock: i % 2 === 0 ? `0${i}:30:00.000` : `1${i}:00:00.000`,
          Owner: (owners[i % 4]?.UID as string | undefined) ?? null,
        }),
      );
      await sut.store.unitOfWork(async (tx) => {
        for (const owner of owners) await tx.insertRecord(seeded.tenant.id, catalogue.owners, owner);
        for (const thing of things) await tx.insertRecord(seeded.tenant.id, catalogue.things, thing);
      });
      const all = new Map([
        ["Owners", owners],
        ["Things", things],
      ]);
      context = {
        now: NOW,
        lookup: (objectName, uid) => all.get(objectName)?.find((record) => record.UID === uid) ?? null,
        select: (objectName) => all.get(objectName) ?? [],
      };
    }

    test("listRecords and countRecords keep what EQL's evaluator keeps, for every kind of condition", async () => {
      await seedRecords();
      const { catalogue } = seeded;
      const object = catalogue.things;
      const order = parseOrderBy(null, object, catalogue);
      for (const text of FILTERS) {
        const filter = prepareFilter(text, object, catalogue);
        const expected = things
          .filter((record) => evaluateFilter(filter, record, context))
          .map((record) => record.UID as string)
          .toSorted();
        const listed = await sut.store.listRecords(catalogue.tenantId, object, {
          filter,
          order,
          after: null,
          offset: 0,
          limit: 100,
          now: NOW,
        });
        expect({ text, uids: listed.map((row) => row.values.UID) }).toEqual({ text, uids: expected });
        expect({
          text,
          count: await sut.store.countRecords(catalogue.tenantId, object, filter, NOW),
        }).toEqual({
          text,
          count: expected.length,
        });
      }
      expect(await sut.store.countRecords(catalogue.tenantId, object, null, NOW)).toBe(things.length);
      // NOW() is what the query says it is.
      const recent = prepareFilter("At >= NOW() - 90 minutes", object, catalogue);
      expect(await sut.store.countRecords(catalogue.tenantId, object, recent, NOW)).toBe(2);
      expect(await sut.store.countRecords(catalogue.tenantId, object, recent, NOW + 10 * HOUR)).toBe(0);
    });

    test("only the fields asked for, with to-one lookups joined: the target, or null", async () => {
      await seedRecords();
      const { catalogue } = seeded;
      const { things: object, owners: target } = catalogue;
      const reference = fieldOf(object, "Owner");
      const fields = [fieldOf(object, "UID"), fieldOf(object, "Name"), reference];
      const targetFields = [fieldOf(target, "UID"), fieldOf(target, "Score")];
      const listed = await sut.store.listRecords(catalogue.tenantId, object, {
        filter: null,
        order: parseOrderBy("Name ASC", object, catalogue),
        after: null,
        offset: 0,
        limit: 100,
        now: NOW,
        fields,
        lookups: [{ reference, target, fields: targetFields }],
      });
      const byUid = new Map(owners.map((owner) => [owner.UID, owner]));
      for (const { values } of listed) {
        const written = things.find((thing) => thing.UID === values.UID) as RecordValues;
        expect(Object.fromEntries(Object.entries(values))).toEqual({
          UID: written.UID ?? null,
          Name: written.Name ?? null,
          Owner: written.Owner ?? null,
        });
        const owner = byUid.get(written.Owner as string);
        expect((values as WithLookups)[LOOKUPS]?.Owner ?? null).toEqual(
          owner ? { UID: owner.UID ?? null, Score: owner.Score ?? null } : null,
        );
      }
    });

    test("children of many parents: filtered, each parent's first `limit`, fields and lookups as asked", async () => {
      await seedRecords();
      const { catalogue } = seeded;
      const { things: object, owners: ownerObject } = catalogue;
      const reference = fieldOf(object, "Owner");
      const parents = owners.map((owner) => owner.UID as string);
      const filter = prepareFilter("Name != 'b'", object, catalogue);
      const order = parseOrderBy("Count DESC", object, catalogue);
      const children = await sut.store.listRelated(catalogue.tenantId, object, reference, parents, {
        filter,
        order,
        limit: 1,
        now: NOW,
        fields: [fieldOf(object, "UID"), fieldOf(object, "Count")],
        lookups: [
          {
            reference,
            target: ownerObject,
            fields: [fieldOf(ownerObject, "UID"), fieldOf(ownerObject, "Name")],
          },
        ],
      });
      for (const parent of parents) {
        const mine = things
          .filter((thing) => thing.Owner === parent && evaluateFilter(filter, thing, context))
          .toSorted((a, b) => ((b.Count as number) ?? -Infinity) - ((a.Count as number) ?? -Infinity))
          .slice(0, 1);
        const got = children.filter((child) => child.Owner === parent);
        expect(got.map((child) => ({ UID: child.UID, Count: child.Count }))).toEqual(
          mine.map((thing) => ({ UID: thing.UID, Count: thing.Count })),
        );
        for (const child of got) expect((child as WithLookups)[LOOKUPS]?.Owner?.UID).toBe(parent);
      }
      const none = { filter: null, order, limit: 5, now: NOW };
      expect(await sut.store.listRelated(catalogue.tenantId, object, reference, [], none)).toEqual([]);
      expect(
        await sut.store.listRelated(catalogue.tenantId, object, reference, parents, { ...none, limit: 0 }),
      ).toEqual([]);
    });
  });
}
