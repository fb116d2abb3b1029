/**
 * Conformance: the order of lists, part of the port's list contract. Every
 * order is checked against a reference sort written here with EQL's own
 * comparison (api/eql/compare-values.ts), NULL lowest in both directions, UID
 * last; whole, in keyset pages (`after`), and in offset pages.
 */
import { describe, expect, test } from "bun:test";
import { VALUE_CLASS } from "../../../api/eql/coerce-literal.ts";
import { comparable, compareValues } from "../../../api/eql/compare-values.ts";
import { type OrderTerm, parseOrderBy } from "../../../api/eql/parse-order-by.ts";
import type { Catalogue, ObjectDef } from "../../../api/model/catalogue.ts";
import type { RecordValues } from "../../../api/model/record-values.ts";
import type { Store } from "../../../api/store/store.ts";
import { newRecord, type SeededTenant, seedTenant } from "./fixtures.ts";
import type { StoreUnderTest } from "./store-under-test.ts";

/** The value `term` sorts `record` by (following lookup hops through `byUid`). */
function sortValue(term: OrderTerm, record: RecordValues, byUid: Map<string, RecordValues>): unknown {
  let current: RecordValues | undefined = record;
  for (const hop of term.operand.hops) {
    const uid: unknown = current?.[hop.reference.name];
    current = typeof uid === "string" ? byUid.get(uid) : undefined;
  }
  return current?.[term.operand.field.name] ?? null;
}

/** `records` in the order `terms` says, as EQL compares values: NULL lowest, whatever the direction. */
function referenceSort(
  records: readonly RecordValues[],
  terms: readonly OrderTerm[],
  byUid: Map<string, RecordValues>,
): RecordValues[] {
  const compare = (a: RecordValues, b: RecordValues) => {
    for (const term of terms) {
      const valueClass = VALUE_CLASS[term.operand.field.type];
      const x = comparable(sortValue(term, a, byUid), valueClass);
      const y = comparable(sortValue(term, b, byUid), valueClass);
      const ascending = x === null ? (y === null ? 0 : -1) : y === null ? 1 : compareValues(x, y);
      if (ascending !== 0) return term.direction === "DESC" ? -ascending : ascending;
    }
    return 0;
  };
  return records.toSorted(compare);
}

/** Every record of a list, read `pageSize` at a time going on from the last record's sort key. */
async function readByKeyset(
  store: Store,
  catalogue: Catalogue,
  object: ObjectDef,
  order: readonly OrderTerm[],
  pageSize: number,
): Promise<RecordValues[]> {
  const all: RecordValues[] = [];
  let after: (string | number | null)[] | null = null;
  for (;;) {
    const page = await store.listRecords(catalogue.tenantId, object, {
      filter: null,
      order,
      after,
      offset: 0,
      limit: pageSize,
      now: Date.now(),
    });
    all.push(...page.map((listed) => listed.values));
    const last = page.at(-1);
    if (!last || page.length < pageSize) return all;
    after = last.sortKey;
  }
}

const ORDERS = [
  "Count ASC",
  "Count DESC",
  "Name ASC",
  "Name DESC",
  "Price ASC",
  "Price DESC",
  "Flag ASC, Count DESC",
  "Flag DESC",
  "Day ASC",
  "At DESC",
  "Clock ASC",
  "Kind DESC, Name ASC",
  "Owner.Name ASC",
  "Owner.Name DESC, Count ASC",
  "Owner.Parent.Score ASC",
  "Owner.Parent.Score DESC",
];

export function describeListOrder(sut: StoreUnderTest): void {
  describe("list order (NULL lowest, text by code point)", () => {
    let seeded: SeededTenant;
    let things: RecordValues[];
    let byUid: Map<string, RecordValues>;

    /** Owners (a root with a score, one without, and their children) and things of every value, nulls among them. */
    async function seedRecords(): Promise<void> {
      seeded = await seedTenant(sut.store);
      const { owners, things: object } = seeded.catalogue;
      const by = seeded.user.id;
      const root = newRecord(owners, by, { Name: "root", Score: 5 });
      const bare = newRecord(owners, by, { Name: null, Score: null });
      const ownerRecords = [
        root,
        bare,
        newRecord(owners, by, { Name: "b", Parent: root.UID as string }),
        newRecord(owners, by, { Name: "B", Parent: bare.UID as string }),
        newRecord(owners, by, { Name: "é" }),
      ];
      const owner = (i: number) => (i < 0 ? null : (ownerRecords[i % ownerRecords.length]?.UID as string));
      const names = ["b", "B", "a", null, "é", "Z", "ab", "a", null, "aé", "ä", "\u{1F600}", "\uFFFD"];
      const prices = ["10.5", "9.25", null, "-1", "100", "0.01", null, "10.5", "2"];
      const counts = [3, null, 1, null, 2, 3, -4, 0, null, 2];
      const kinds = ["Alpha", "beta", "Gamma", null];
      things = names.map((name, i) =>
        newRecord(object, by, {
          Name: name,
          Count: counts[i % counts.length] ?? null,
          Price: prices[i % prices.length] ?? null,
          Flag: i % 3 === 0 ? null : i % 3 === 1,
          Day: i % 4 === 0 ? null : `2024-0${(i % 9) + 1}-1${i % 7}`,
          At: i % 5 === 0 ? null : Date.UTC(2024, i % 12, 1, i),
          Clock: i % 6 === 0 ? null : `0${i % 10}:${10 + i}:00.000`,
          Kind: kinds[i % kinds.length] ?? null,
          Owner: owner(i % 7 === 6 ? -1 : i),
        }),
      );
      await sut.store.unitOfWork(async (tx) => {
        for (const record of ownerRecords) await tx.insertRecord(seeded.tenant.id, owners, record);
        for (const record of things) await tx.insertRecord(seeded.tenant.id, object, record);
      });
      byUid = new Map([...ownerRecords, ...things].map((record) => [record.UID as string, record]));
    }

    for (const orderBy of ORDERS) {
      test(`${orderBy}: whole, in keyset pages and in offset pages`, async () => {
        await seedRecords();
        const { catalogue } = seeded;
        const object = catalogue.things;
        const order = parseOrderBy(orderBy, object, catalogue);
        const expected = referenceSort(things, order, byUid).map((record) => record.UID);
        const uids = (records: RecordValues[]) => records.map((record) => record.UID);
        expect(uids(await readByKeyset(sut.store, catalogue, object, order, 100))).toEqual(expected);
        expect(uids(await readByKeyset(sut.store, catalogue, object, order, 2))).toEqual(expected);
        const page = await sut.store.listRecords(catalogue.tenantId, object, {
          filter: null,
          order,
          after: null,
          offset: 3,
          limit: 4,
          now: Date.now(),
        });
        expect(page.map((listed) => listed.values.UID)).toEqual(expected.slice(3, 7));
      });
    }

    test("children of many parents come in the same order, NULL lowest, each parent's first `limit`", async () => {
      await seedRecords();
      const { catalogue } = seeded;
      const object = catalogue.things;
      const reference = object.fields.find((field) => field.name === "Owner");
      if (!reference) throw new Error("Things has no Owner");
      const parents = [...byUid.values()]
        .filter((record) => !("Owner" in record))
        .map((o) => o.UID as string);
      expect(parents.length).toBe(5);
      for (const orderBy of ["Count ASC", "Count DESC", "Name DESC", "Price ASC"]) {
        const order = parseOrderBy(orderBy, object, catalogue);
        const children = await sut.store.listRelated(catalogue.tenantId, object, reference, parents, {
          filter: null,
          order,
          limit: 2,
          now: Date.now(),
        });
        for (const parent of parents) {
          const expected = referenceSort(
            things.filter((thing) => thing.Owner === parent),
            order,
            byUid,
          ).slice(0, 2);
          expect(children.filter((child) => child.Owner === parent).map((c) => c.UID)).toEqual(
            expected.map((e) => e.UID),
          );
        }
      }
    });
  });
}
