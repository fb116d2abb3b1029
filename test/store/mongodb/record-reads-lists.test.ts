/**
 * The MongoDB record lists as the engine runs them (api/store/mongodb/records/record-read-session.ts): the
 * compiled pipelines (query/list-pipeline.ts) over the engine's own layout (record-layout.ts: every
 * standard object's records in `standard_records`, keyed by tenant and object id), run by mingo,
 * and their documents decoded by decode-record.ts into listed records: the fields asked for and no
 * other, the sort keys a cursor carries (and the next page after them), the joined lookups under
 * LOOKUPS (the target, or null when the reference is empty or names nothing), counts, and the
 * children of many parents. Beside this tenant's records: another tenant's with the same UIDs and
 * other values, and this tenant's records of an object the catalogue lacks with the same UIDs. The compiler's
 * differential tests (test/eql/mongodb-*differential.test.ts) cover the filters and orders at
 * large; this covers the engine's layout and decoding. mingo stands in for the server because none
 * can run here; it does not prove index use, the collation, transactions or concurrency.
 */
import { describe, expect, test } from "bun:test";
import { Aggregator } from "mingo";
import type { Document } from "mongodb";
import { prepareFilter } from "../../../api/eql/check-filter.ts";
import { parseOrderBy } from "../../../api/eql/parse-order-by.ts";
import type { FieldDef, ObjectDef } from "../../../api/model/catalogue.ts";
import { findField } from "../../../api/model/catalogue.ts";
import type { RecordValues } from "../../../api/model/record-values.ts";
import {
  countPipeline,
  listPipeline,
  relatedPipeline,
} from "../../../api/store/mongodb/query/list-pipeline.ts";
import { decodeListed, listedRecordOf } from "../../../api/store/mongodb/records/decode-record.ts";
import { recordCollectionOf, recordLayout } from "../../../api/store/mongodb/records/record-layout.ts";
import {
  type JoinedLookup,
  type ListQuery,
  LOOKUPS,
  type WithLookups,
} from "../../../api/store/ports/records-port.ts";
import { COLLECTION } from "../../../common/store/mongodb/layout.ts";
import { recordDocument } from "../../eql/support/mingo-store.ts";
import { TEST_CATALOGUE, testObject } from "../../eql/support/test-catalogue.ts";

const TENANT = "t1";
const OTHER = "t2";
const NOW = Date.UTC(2024, 4, 1);
const things = testObject("Things");
const owners = testObject("Owners");
const layout = recordLayout(TENANT);
const DECOY_OBJECT = { id: "decoy-object-id" };
const field = (object: ObjectDef, name: string) => findField(object, name) as FieldDef;

const record = (object: ObjectDef, values: RecordValues): RecordValues =>
  Object.fromEntries(object.fields.map((f) => [f.name, values[f.name] ?? null]));

const OWNERS = [
  record(owners, { UID: "owner-1", Name: "root", Score: 5 }),
  record(owners, { UID: "owner-2", Name: "leaf", Score: 1, Parent: "owner-1" }),
];
const THINGS = [
  record(things, { UID: "thing-1", Name: "b", Count: 1, Owner: "owner-1" }),
  record(things, { UID: "thing-2", Name: "a", Count: 2, Owner: "owner-2" }),
  record(things, { UID: "thing-3", Name: null, Count: 3, Owner: "owner-gone" }),
  record(things, { UID: "thing-4", Name: "c", Count: 4, Owner: null }),
  record(things, { UID: "thing-5", Name: "a", Count: 5, Owner: "owner-1" }),
];
/** Another tenant's records with this tenant's UIDs, other names, and references of their own. */
const decoy = (values: RecordValues): RecordValues => ({
  ...values,
  Name: `other ${values.Name}`,
  ...("Owner" in values ? { Owner: "owner-2" } : {}),
});

/** The engine's collections: Owners and Things share `standard_records`. */
const COLLECTIONS = new Map<string, Document[]>([
  [
    recordCollectionOf(things),
    [
      ...OWNERS.map((values) => recordDocument(TENANT, owners, values)),
      ...OWNERS.map((values) => recordDocument(OTHER, owners, decoy(values))),
      ...THINGS.map((values) => recordDocument(TENANT, things, values)),
      ...THINGS.map((values) => recordDocument(OTHER, things, decoy(values))),
      // This tenant's records of an object the catalogue lacks, under the same UIDs.
      ...THINGS.map((values) => recordDocument(TENANT, things, decoy(values), DECOY_OBJECT)),
      ...OWNERS.map((values) => recordDocument(TENANT, owners, decoy(values), DECOY_OBJECT)),
    ],
  ],
]);

const aggregator = (pipeline: Document[]) =>
  new Aggregator(pipeline, { collectionResolver: (name: string) => COLLECTIONS.get(name) ?? [] });
/** `collection.aggregate` on the collection of `object`, as the engine runs it. */
const aggregate = (object: ObjectDef, pipeline: Document[]) =>
  aggregator(pipeline).run(COLLECTIONS.get(recordCollectionOf(object)) ?? []) as Document[];

const ownerLookup: JoinedLookup = {
  reference: field(things, "Owner"),
  target: owners,
  fields: [field(owners, "UID"), field(owners, "Name")],
};

function listQuery(overrides: Partial<ListQuery>): ListQuery {
  return {
    filter: null,
    order: parseOrderBy("Name ASC", things, TEST_CATALOGUE),
    after: null,
    offset: 0,
    limit: 100,
    now: NOW,
    ...overrides,
  };
}

const list = (query: ListQuery) =>
  aggregate(things, listPipeline(things, query, layout)).map((document) =>
    listedRecordOf(query.fields ?? things.fields, query.lookups, document),
  );

describe("listRecords on the engine's layout", () => {
  test("this tenant's records of the object, in order, with their sort keys; the next page goes on after them", () => {
    const first = list(listQuery({ limit: 3 }));
    expect(first.map((listed) => listed.values)).toEqual([THINGS[2], THINGS[1], THINGS[4]] as RecordValues[]);
    // NULL first ascending; then the UID, the last key of every order.
    expect(first.map((listed) => listed.sortKey)).toEqual([
      [null, "thing-3"],
      ["a", "thing-2"],
      ["a", "thing-5"],
    ]);
    const next = list(listQuery({ after: first.at(-1)?.sortKey ?? null }));
    expect(next.map((listed) => listed.values.UID)).toEqual(["thing-1", "thing-4"]);
  });

  test("only the fields asked for; the joined lookup's target, or null when the reference is empty or dangles", () => {
    const fields = [field(things, "UID"), field(things, "Count")];
    const listed = list(listQuery({ fields, lookups: [ownerLookup] }));
    const found = listed.map(({ values }) => ({
      fields: Object.fromEntries(Object.entries(values)),
      owner: (values as WithLookups)[LOOKUPS]?.Owner,
    }));
    expect(found).toEqual([
      { fields: { UID: "thing-3", Count: 3 }, owner: null },
      { fields: { UID: "thing-2", Count: 2 }, owner: { UID: "owner-2", Name: "leaf" } },
      { fields: { UID: "thing-5", Count: 5 }, owner: { UID: "owner-1", Name: "root" } },
      { fields: { UID: "thing-1", Count: 1 }, owner: { UID: "owner-1", Name: "root" } },
      { fields: { UID: "thing-4", Count: 4 }, owner: null },
    ]);
  });

  test("without lookups asked for, a record carries no LOOKUPS", () => {
    for (const { values } of list(listQuery({}))) expect(LOOKUPS in values).toBe(false);
  });

  test("filters through a lookup read this tenant's target only", () => {
    const filter = prepareFilter("Owner.Name == 'root'", things, TEST_CATALOGUE);
    expect(list(listQuery({ filter })).map((listed) => listed.values.UID)).toEqual(["thing-5", "thing-1"]);
  });
});

describe("countRecords on the engine's layout", () => {
  const count = (text: string | null) => {
    const filter = text === null ? null : prepareFilter(text, things, TEST_CATALOGUE);
    const [counted] = aggregate(things, countPipeline(things, filter, NOW, layout));
    return Number(counted?.n ?? 0);
  };

  test("counts this tenant's records of the object the filter keeps; none is zero", () => {
    expect(count(null)).toBe(5);
    expect(count("Count >= 2")).toBe(4);
    expect(count("Name == 'a'")).toBe(2);
    expect(count("Name == 'zzz'")).toBe(0);
  });
});

describe("listRelated on the engine's layout", () => {
  test("each parent's first children in order, with the reference read and the lookups joined", () => {
    const reference = field(things, "Owner");
    const fields = [field(things, "UID"), field(things, "Count")];
    const query = {
      filter: null,
      order: parseOrderBy("Count DESC", things, TEST_CATALOGUE),
      limit: 1,
      now: NOW,
      fields,
      lookups: [ownerLookup],
    };
    const pipeline = relatedPipeline(
      things,
      reference,
      ["owner-1", "owner-2", "owner-1", "owner-gone"],
      query,
      layout,
    );
    const documents = aggregator(pipeline).run([]) as Document[];
    const children = documents.map((document) =>
      decodeListed([...fields, reference], query.lookups, document),
    );
    const byParent = (parent: string) =>
      children
        .filter((child) => child.Owner === parent)
        .map(
          (child): Record<string, unknown> => ({
            ...Object.fromEntries(Object.entries(child)),
            owner: (child as WithLookups)[LOOKUPS]?.Owner?.Name,
          }),
        );
    expect(byParent("owner-1")).toEqual([{ UID: "thing-5", Count: 5, Owner: "owner-1", owner: "root" }]);
    expect(byParent("owner-2")).toEqual([{ UID: "thing-2", Count: 2, Owner: "owner-2", owner: "leaf" }]);
    expect(byParent("owner-gone")).toEqual([
      { UID: "thing-3", Count: 3, Owner: "owner-gone", owner: undefined },
    ]);
    expect(children).toHaveLength(3);
  });
});

test("a custom object's records are read from custom_records, a standard object's from standard_records", () => {
  expect(recordCollectionOf({ custom: true })).toBe(COLLECTION.customRecords);
  expect(recordCollectionOf(things)).toBe(COLLECTION.standardRecords);
});
