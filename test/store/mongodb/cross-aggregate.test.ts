/**
 * Where one aggregate's writer meets another's reader on MongoDB: the documents the record writes
 * put down (records/record-write-plan.ts, carried out by mingo in record-writes-memory.ts) as the
 * catalogue's changes take them up again (catalogue/catalogue-storage.ts: a field's values and
 * keys, an object's records, keys, reference gates and write gates), and the custom object the
 * catalogue writes (catalogue-documents.ts) as a record write looks a reference's target up. Each
 * side has tests of its own over documents it made itself; these run one side's filters over the
 * other side's documents, so a field renamed or re-encoded on one side only fails here.
 */
import { describe, expect, test } from "bun:test";
import { Query, updateMany } from "mingo";
import { BSON, type Document } from "mongodb";
import type { FieldDef, ObjectDef } from "../../../api/model/catalogue.ts";
import type { RecordValues } from "../../../api/model/record-values.ts";
import {
  customObjectByName,
  objectDocument,
} from "../../../api/store/mongodb/catalogue/catalogue-documents.ts";
import {
  fillDefault,
  type ManyWrite,
  objectGates,
  objectRecords,
  referenceGatesOf,
  uniqueKeys,
  unsetField,
} from "../../../api/store/mongodb/catalogue/catalogue-storage.ts";
import { decodeRecord } from "../../../api/store/mongodb/records/decode-record.ts";
import type { ResolvedReference } from "../../../api/store/mongodb/records/planned-write.ts";
import { planInsert, referencesOf } from "../../../api/store/mongodb/records/record-write-plan.ts";
import { COLLECTION } from "../../../common/store/mongodb/layout.ts";
import { customField, customObject, newRecord, USERS } from "../conformance/fixtures.ts";
import { MemoryCollections } from "./record-writes-memory.ts";

const T = "tenant-a";
const OTHER = "tenant-b";
const BY = "user-1";

const shelves = customObject("Shelves", {
  Label: { type: "string", unique: true },
  Price: { type: "decimal", precision: 10, scale: 2, unique: true },
  At: { type: "datetime", unique: true },
  Depth: { type: "int" },
});
const boxes = customObject("Boxes", {
  Name: { type: "string", unique: true },
  Shelf: { type: "reference", referenceTo: "Shelves", reverseName: "Boxes" },
});
const fieldOf = (object: ObjectDef, name: string) => object.fields.find((f) => f.name === name) as FieldDef;
const throughBson = (document: Document): Document => BSON.deserialize(BSON.serialize(document));

/** The records a tenant writes through the record members' plans: shelves, and boxes referring to them. */
function written() {
  const db = new MemoryCollections();
  const targets = new Map([
    ["Shelves", { id: shelves.id, custom: true }],
    ["Boxes", { id: boxes.id, custom: true }],
    ["Users", { id: USERS.id, custom: false }],
  ]);
  const insert = (tenantId: string, object: ObjectDef, values: RecordValues) => {
    const references = referencesOf(object, object.fields, values, values.UID as string).map(
      (reference): ResolvedReference => ({
        ...reference,
        target: targets.get(reference.field.referenceTo as string) ?? null,
      }),
    );
    db.transaction(() => db.issue(planInsert(tenantId, object, values, references)));
    return values;
  };
  for (const tenantId of [T, OTHER])
    insert(tenantId, USERS, { ...newRecord(USERS, BY, { LastName: "Lovelace" }), UID: BY });
  const top = insert(
    T,
    shelves,
    newRecord(shelves, BY, { Label: "top", Price: "1.50", At: 86_400_000, Depth: 3 }),
  );
  const low = insert(T, shelves, newRecord(shelves, BY, { Label: "low", Price: "0.1", At: 0 }));
  const box = insert(T, boxes, newRecord(boxes, BY, { Name: "b1", Shelf: top.UID as string }));
  const elsewhere = insert(OTHER, shelves, newRecord(shelves, BY, { Label: "top", Price: "1.5" }));
  insert(OTHER, boxes, newRecord(boxes, BY, { Name: "b1", Shelf: elsewhere.UID as string }));
  return { db, top, low, box };
}

/** A catalogue filter without its `_id` range (mingo does not order MinKey/MaxKey inside embedded documents; catalogue-storage.test.ts holds the range to the equalities). */
const equalitiesOf = (write: ManyWrite): Document => {
  const { _id: _range, ...equalities } = write.filter;
  return equalities;
};

describe("a reference's target: the custom object the catalogue writes, as a record write looks it up", () => {
  const document = throughBson(objectDocument(T, shelves, 1000));

  test("the lookup finds the catalogue's document by the exact name a reference holds", () => {
    expect(new Query(customObjectByName(T, "Shelves")).test(document)).toBe(true);
  });

  test("no other tenant's, and no name differing in case: a reference names its object exactly", () => {
    expect(new Query(customObjectByName(OTHER, "Shelves")).test(document)).toBe(false);
    expect(new Query(customObjectByName(T, "SHELVES")).test(document)).toBe(false);
    expect(new Query(customObjectByName(T, "Shelf")).test(document)).toBe(false);
  });

  test("for a name with non-ASCII letters too (folded as the unique index folds it)", () => {
    const named = { ...shelves, name: "Étagères_ABC" };
    const stored = throughBson(objectDocument(T, named, 1000));
    expect(new Query(customObjectByName(T, "Étagères_ABC")).test(stored)).toBe(true);
  });
});

describe("what record writes put down, a catalogue change takes up", () => {
  test("an object's records: exactly the tenant's records of it", () => {
    const { db, top, low } = written();
    const write = objectRecords(T, shelves);
    const found = db.find(write.collection, write.filter).map((record) => record.u);
    expect(found.toSorted()).toEqual([top.UID, low.UID].toSorted());
  });

  test("a decimal field deleted: its value and its numeric shadow are gone from every record, which reads it as NULL", () => {
    const { db } = written();
    const price = fieldOf(shelves, "Price");
    const write = unsetField(T, shelves, price);
    const records = db.of(write.collection);
    const { modifiedCount } = updateMany(records, write.filter, write.update);
    expect(modifiedCount).toBe(2);
    for (const record of records.filter((r) => r.t === T && r.o === shelves.id)) {
      expect(Object.keys(record.d).filter((key) => key.startsWith(price.mapping))).toEqual([]);
      expect(decodeRecord([price], record)).toEqual({ Price: null });
    }
    // The other tenant's record keeps its value and shadow.
    const [theirs] = records.filter((r) => r.t === OTHER && r.o === shelves.id);
    expect(Object.keys(theirs?.d ?? {}).filter((key) => key.startsWith(price.mapping))).toHaveLength(2);
  });

  test("a field added with a default: a record the record members wrote holds the field (NULL too) and keeps it", () => {
    const { db } = written();
    // Depth as a new field of Shelves, with a default: the records written with Depth (null in `low`) hold its key.
    const depth = { ...fieldOf(shelves, "Depth"), defaultValue: 30 };
    const fill = fillDefault(T, shelves, depth) as NonNullable<ReturnType<typeof fillDefault>>;
    const { matchedCount } = updateMany(db.of(fill.collection), fill.filter, fill.update);
    expect(matchedCount).toBe(0);
    // A field the records were not written with gets it in every one of them.
    const width = customField("Shelves", "Width", { type: "int", defaultValue: 7 });
    const widen = fillDefault(T, shelves, width) as NonNullable<ReturnType<typeof fillDefault>>;
    expect(updateMany(db.of(widen.collection), widen.filter, widen.update).modifiedCount).toBe(2);
  });

  test("a unique field deleted: exactly the keys the record writes took for it", () => {
    const { db } = written();
    for (const name of ["Label", "Price", "At"]) {
      const field = fieldOf(shelves, name);
      const write = uniqueKeys(T, shelves.id, field.id);
      expect(write.collection).toBe(COLLECTION.recordKeys);
      const taken = db.find(COLLECTION.recordKeys, { "_id.t": T, "_id.f": field.id });
      expect(taken).toHaveLength(2);
      expect(db.find(write.collection, equalitiesOf(write))).toEqual(taken);
    }
  });

  test("an object deleted: all its keys, its records' reference gates and its write gates, no other object's or tenant's", () => {
    const { db, top } = written();
    const keys = uniqueKeys(T, shelves.id);
    expect(db.find(keys.collection, equalitiesOf(keys))).toHaveLength(6);
    expect(db.find(COLLECTION.recordKeys, { "_id.t": T })).toHaveLength(6 + 1);

    // The box's reference to `top` took one of top's reference gates; the Users record's gates are not Shelves'.
    const gates = referenceGatesOf(T, shelves.id);
    const referred = db.find(gates.collection, equalitiesOf(gates));
    expect(referred.map((gate) => gate._id.u)).toEqual([top.UID]);
    expect(db.find(COLLECTION.referenceGates, {}).length).toBeGreaterThan(referred.length);

    // Every write gate a record write of Shelves took is among the object's gates.
    const objectGate = objectGates(T, shelves.id);
    const taken = db.find(COLLECTION.writeGates, { "_id.t": T, "_id.o": shelves.id });
    expect(taken.length).toBeGreaterThan(0);
    expect(db.find(objectGate.collection, objectGate.filter)).toEqual(taken);
  });
});
