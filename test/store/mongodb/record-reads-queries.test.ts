/**
 * The MongoDB record reads' query documents (api/store/mongodb/records/record-read-queries.ts,
 * sequence-counters.ts) and their decoding (decode-record.ts), run by mingo over documents of the
 * engine's shape (`{_id, t, o, u, d}`, values written by the record codec, through the driver's
 * BSON and back): the records of two tenants and two objects in one collection, as the engine's
 * `standard_records` holds them, the same UIDs and values in each, so a query that forgets its
 * tenant or its object reads a decoy. mingo stands in for the server because none can run here;
 * it does not prove what only a server shows: that the indexes serve these queries (record_uid,
 * record_fields, counters' `_id`), the collation, a unit of work's snapshot, concurrency.
 */
import { describe, expect, test } from "bun:test";
import { Query } from "mingo";
import type { Document } from "mongodb";
import type { FieldDef } from "../../../api/model/catalogue.ts";
import { findField } from "../../../api/model/catalogue.ts";
import type { FieldValue, RecordValues } from "../../../api/model/record-values.ts";
import { decodeRecord } from "../../../api/store/mongodb/records/decode-record.ts";
import { recordLayout } from "../../../api/store/mongodb/records/record-layout.ts";
import {
  byUidsQuery,
  byValueQuery,
  fieldsProjection,
  referencingQuery,
} from "../../../api/store/mongodb/records/record-read-queries.ts";
import {
  SEQUENCE_ORDER,
  sequenceCounterId,
  sequenceValueOf,
  tenantSequencesQuery,
} from "../../../api/store/mongodb/records/sequence-counters.ts";
import { recordDocument } from "../../eql/support/mingo-store.ts";
import { testObject } from "../../eql/support/test-catalogue.ts";
import { MingoCollection } from "./mingo-collection.ts";

const TENANT = "t1";
const OTHER = "t2";
const things = testObject("Things");
const owners = testObject("Owners");
const layout = recordLayout(TENANT);
const thingField = (name: string) => findField(things, name) as FieldDef;

/** A full record of `Things` (every field; absent ones null). */
function thing(values: RecordValues): RecordValues {
  return Object.fromEntries(things.fields.map((field) => [field.name, values[field.name] ?? null]));
}

const A = thing({
  UID: "thing-a",
  Name: "k-1",
  Count: 2 ** 53 - 1,
  Price: "2.5",
  Flag: false,
  At: Date.UTC(2024, 1, 29, 23, 59, 59, 999),
  Day: "2024-02-29",
  Tags: ["red", "Green"],
  Owner: "owner-1",
});
const B = thing({ UID: "thing-b", Name: "K-1", Owner: "owner-1", Backup: "owner-2" });
const C = thing({ UID: "thing-c", Name: null, Owner: "owner-2" });

/**
 * standard_records: this tenant's Things A, B, C; another tenant's records with the same UIDs and
 * values; this tenant's Owners holding the same UIDs and, under the same storage keys, the same
 * values (an object's fields are keyed by storage name, which another object may share).
 */
const standardRecords = new MingoCollection([
  ...[A, B, C].map((values) => recordDocument(TENANT, things, values)),
  ...[A, B, C].map((values) => recordDocument(OTHER, things, values)),
  ...[A, B, C].map((values) => recordDocument(TENANT, things, values, owners)),
]);

const run = (query: Document, projection?: Document): Document[] =>
  standardRecords.find(query, { projection });
const byUid = (x: RecordValues, y: RecordValues) => String(x.UID).localeCompare(String(y.UID));
const uidsOf = (documents: Document[]) => documents.map((document) => document.u).toSorted();

describe("records by UID", () => {
  test("only this tenant's records of this object, each once, only the fields asked for", () => {
    const found = run(byUidsQuery(layout, things, ["thing-b", "thing-a", "thing-b", "gone"]));
    expect(found.map((document) => [document.t, document.o])).toEqual([
      [TENANT, things.id],
      [TENANT, things.id],
    ]);
    expect(found.map((document) => decodeRecord(things.fields, document)).toSorted(byUid)).toEqual([A, B]);

    const fields = [thingField("UID"), thingField("Price"), thingField("Tags")];
    const projected = run(byUidsQuery(layout, things, ["thing-a"]), fieldsProjection(layout, fields));
    expect(projected).toHaveLength(1);
    // The decimal's exact value is kept, its shadow is not read.
    expect(Object.keys(projected[0]?.d ?? {}).toSorted()).toEqual(["price", "tags"]);
    expect(projected.map((document) => decodeRecord(fields, document))).toEqual([
      { UID: "thing-a", Price: "2.5", Tags: ["red", "Green"] },
    ]);
  });

  test("the other tenant reads its own", () => {
    const found = run(byUidsQuery(recordLayout(OTHER), things, ["thing-a"]));
    expect(found.map((document) => document.t)).toEqual([OTHER]);
  });
});

describe("a record by value", () => {
  const matches = (field: string, value: FieldValue, except?: string) => {
    const query = byValueQuery(layout, things, thingField(field), value, except);
    return query === null ? null : uidsOf(run(query));
  };

  test("equal values of every kind, compared as the compiler compares them", () => {
    expect(matches("Name", "k-1")).toEqual(["thing-a"]);
    // Code points, no case folding.
    expect(matches("Name", "K-1")).toEqual(["thing-b"]);
    expect(matches("Name", "k-2")).toEqual([]);
    // A decimal by its shadow, as EQL compares numbers: 2.50 is the stored 2.5.
    expect(matches("Price", "2.5")).toEqual(["thing-a"]);
    expect(matches("Price", "2.50")).toEqual(["thing-a"]);
    expect(matches("Price", "2.51")).toEqual([]);
    // An integer past int32, stored as int64.
    expect(matches("Count", 2 ** 53 - 1)).toEqual(["thing-a"]);
    expect(matches("At", Date.UTC(2024, 1, 29, 23, 59, 59, 999))).toEqual(["thing-a"]);
    expect(matches("At", Date.UTC(2024, 1, 29, 23, 59, 59, 998))).toEqual([]);
    expect(matches("Day", "2024-02-29")).toEqual(["thing-a"]);
    expect(matches("Flag", false)).toEqual(["thing-a"]);
    expect(matches("Tags", ["red", "Green"])).toEqual(["thing-a"]);
    expect(matches("Tags", ["Green", "red"])).toEqual([]);
    expect(matches("UID", "thing-c")).toEqual(["thing-c"]);
  });

  test("the record excepted is never found, also when the field is the UID", () => {
    expect(matches("Owner", "owner-1")).toEqual(["thing-a", "thing-b"]);
    expect(matches("Owner", "owner-1", "thing-a")).toEqual(["thing-b"]);
    expect(matches("Name", "k-1", "thing-a")).toEqual([]);
    expect(matches("UID", "thing-c", "thing-c")).toEqual([]);
    expect(matches("UID", "thing-c", "thing-a")).toEqual(["thing-c"]);
  });

  test("null equals nothing: no query at all (a query for null would find the records without a value)", () => {
    expect(byValueQuery(layout, things, thingField("Name"), null)).toBeNull();
    expect(byValueQuery(layout, things, thingField("Backup"), null, "thing-a")).toBeNull();
    // A value matches neither a null nor a missing one.
    const missing = { ...recordDocument(TENANT, things, C), d: {} };
    const query = byValueQuery(layout, things, thingField("Name"), "k-1") as Document;
    expect(new Query(query, {}).test(missing)).toBe(false);
  });

  test("the record found decodes whole, every field", () => {
    const query = byValueQuery(layout, things, thingField("Name"), "k-1") as Document;
    expect(run(query).map((document) => decodeRecord(things.fields, document))).toEqual([A]);
  });
});

describe("records referring to a UID", () => {
  test("only this object's records of this tenant whose reference names it, through that reference", () => {
    const count = (field: string, uid: string) =>
      run(referencingQuery(layout, things, thingField(field), uid)).length;
    expect(count("Owner", "owner-1")).toBe(2);
    expect(count("Owner", "owner-2")).toBe(1);
    expect(count("Backup", "owner-2")).toBe(1);
    expect(count("Backup", "owner-1")).toBe(0);
    expect(count("Owner", "owner-gone")).toBe(0);
  });
});

describe("a tenant's sequences", () => {
  const counter = (id: { t: string; k: string } | string, n: number) => ({ _id: id, n });
  const counters = new MingoCollection([
    // The store-wide revocation version (identity-documents.ts): a string `_id`.
    counter("token_revocations", 4),
    counter({ t: TENANT, k: "catalogue" }, 7),
    counter({ t: TENANT, k: "webhooks" }, 3),
    counter(sequenceCounterId(TENANT, "JOB"), 3),
    counter(sequenceCounterId(TENANT, "JA"), 1),
    counter(sequenceCounterId(TENANT, "seq:odd name"), 2),
    counter(sequenceCounterId(OTHER, "JOB"), 9),
    counter(sequenceCounterId("t0", "JOB"), 8),
    counter(sequenceCounterId("t10", "JOB"), 8),
    counter({ t: OTHER, k: "catalogue" }, 1),
  ]);

  test("every sequence of the tenant, by name, with the last value handed out; no other counter", () => {
    const found = counters.find(tenantSequencesQuery(TENANT), { sort: SEQUENCE_ORDER }).map(sequenceValueOf);
    expect(found).toEqual([
      { name: "JA", value: 1 },
      { name: "JOB", value: 3 },
      { name: "seq:odd name", value: 2 },
    ]);
    expect(counters.find(tenantSequencesQuery("t3"))).toEqual([]);
  });

  test("the id a sequence is counted under lies in its tenant's range", () => {
    expect(sequenceCounterId(TENANT, "JOB")).toEqual({ t: TENANT, k: "seq:JOB" });
    // Its fields in this order: the `_id` range compares embedded documents field by field.
    expect(Object.keys(sequenceCounterId(TENANT, "JOB"))).toEqual(["t", "k"]);
  });
});
