/**
 * What a catalogue change writes besides the definitions on the MongoDB engine
 * (api/store/mongodb/catalogue/catalogue-storage.ts), pure: the filters and updates run by mingo,
 * an independent interpreter of MongoDB's query language, over documents of the engine's shape
 * (record documents, unique keys, write gates; each through the driver's BSON serializer and back,
 * as a read returns them). mingo stands in for the server because none can run on the machines
 * this is written on; it does not prove what only a server does: that the indexes serve these
 * filters, the transaction the session runs them in, concurrency (the write conflicts the guard
 * writes are for: write-skew.test.ts names the common documents).
 */
import { describe, expect, test } from "bun:test";
import { Query, updateMany, updateOne } from "mingo";
import { BSON, type Document, ObjectId } from "mongodb";
import type { FieldDef, ObjectDef } from "../../../api/model/catalogue.ts";
import type { RecordValues } from "../../../api/model/record-values.ts";
import {
  catalogueGuards,
  ensureStorage,
  fillDefault,
  type ManyUpdate,
  type ManyWrite,
  markedFields,
  objectGates,
  objectRecords,
  referenceGatesOf,
  storageMarker,
  uniqueKeys,
  unmarkField,
  unsetField,
} from "../../../api/store/mongodb/catalogue/catalogue-storage.ts";
import { decodeFields, encodeFields } from "../../../api/store/mongodb/record-codec.ts";
import { GATES, gateOf, guardUpdates } from "../../../api/store/mongodb/write-skew.ts";
import { COLLECTION } from "../../../common/store/mongodb/layout.ts";
import { customField, customObject, USERS } from "../conformance/fixtures.ts";

const TENANT = "tenant-a";
const OTHER_TENANT = "tenant-b";

const roundTrip = (document: Document): Document => BSON.deserialize(BSON.serialize(document));

const shelves = customObject("Shelves", {
  Label: { type: "string", unique: true },
  Depth: { type: "int", defaultValue: 30 },
  Price: { type: "decimal", precision: 10, scale: 2, defaultValue: "1.50" },
  Colours: { type: "multipicklist", items: ["red", "green", "blue"], defaultValue: "red;blue" },
  Since: { type: "datetime", defaultValue: 86_400_000 },
  Note: { type: "string" },
});
const otherObject = customObject("Crates", { Depth: { type: "int" } });
const fieldOf = (object: ObjectDef, name: string) => object.fields.find((f) => f.name === name) as FieldDef;
const depth = fieldOf(shelves, "Depth");
const price = fieldOf(shelves, "Price");
const stored = (object: ObjectDef) => object.fields.filter((field) => field.type !== "id");

/** A record document as the record members write it (every field of `fields`), through BSON. */
function recordDocument(
  tenantId: string,
  object: ObjectDef,
  fields: readonly FieldDef[],
  values: RecordValues,
): Document {
  return roundTrip({
    _id: new ObjectId(),
    t: tenantId,
    o: object.id,
    u: crypto.randomUUID(),
    d: encodeFields(fields, values),
  });
}

/** Runs an updateMany's filter and update by mingo over `documents` (which it may change or replace in the list). */
function run(update: ManyUpdate, documents: Document[]) {
  return updateMany(documents, update.filter, update.update);
}

/** The named documents of `scene` after `update` ran over them all, and its counts. */
function afterUpdate<K extends string>(update: ManyUpdate, scene: Record<K, Document>) {
  const names = Object.keys(scene) as K[];
  const documents = names.map((name) => scene[name]);
  const result = run(update, documents);
  const after = Object.fromEntries(names.map((name, i) => [name, documents[i]])) as Record<K, Document>;
  return { result, after };
}

const matching = (write: ManyWrite, documents: readonly Document[]) =>
  documents.filter((document) => new Query(write.filter).test(document));

describe("a field added: its default in the records that lack it", () => {
  // Written before Depth was defined: the record members write every field of the definition they are given.
  const without = (tenantId: string, object: ObjectDef) =>
    recordDocument(
      tenantId,
      object,
      stored(object).filter((f) => f.name !== "Depth"),
      {},
    );
  const scene = () => ({
    old: without(TENANT, shelves),
    nullDepth: recordDocument(TENANT, shelves, stored(shelves), { Depth: null }),
    setDepth: recordDocument(TENANT, shelves, stored(shelves), { Depth: 5 }),
    otherTenant: without(OTHER_TENANT, shelves),
    otherObject: without(TENANT, otherObject),
  });

  test("the records of the object written before the field get it; a value or NULL already there is kept", () => {
    const fill = fillDefault(TENANT, shelves, depth) as ManyUpdate;
    expect(fill.collection).toBe(COLLECTION.customRecords);
    const { result, after: documents } = afterUpdate(fill, scene());
    expect(result).toMatchObject({ matchedCount: 1, modifiedCount: 1 });
    const depthOf = (document: Document) => decodeFields([depth], roundTrip(document).d).Depth;
    expect(depthOf(documents.old)).toBe(30);
    expect(depthOf(documents.nullDepth)).toBeNull();
    expect(depthOf(documents.setDepth)).toBe(5);
    // Another tenant's records of the object, and the tenant's records of another object, are not touched.
    expect("__depth" in documents.otherTenant.d).toBe(false);
    expect(documents.otherObject.d.__depth).toBeUndefined();
  });

  test("run again (a unit of work retried, a storage ensured twice), it writes nothing", () => {
    const documents = Object.values(scene());
    const fill = fillDefault(TENANT, shelves, depth) as ManyUpdate;
    run(fill, documents);
    const after = documents.map((document) => JSON.stringify(document));
    expect(run(fill, documents)).toMatchObject({ matchedCount: 0, modifiedCount: 0 });
    expect(documents.map((document) => JSON.stringify(document))).toEqual(after);
  });

  test("every type's default reads back as the field's default; a decimal's numeric shadow is set with it", () => {
    const documents = [recordDocument(TENANT, shelves, [fieldOf(shelves, "Label")], { Label: "top" })];
    for (const fill of ensureStorage(TENANT, shelves, []).fills) run(fill, documents);
    const read = roundTrip(documents[0] as Document);
    expect(decodeFields(stored(shelves), read.d)).toMatchObject({
      Label: "top",
      Depth: 30,
      Price: "1.5",
      Colours: ["red", "blue"],
      Since: 86_400_000,
      Note: null,
    });
    expect(read.d["__price:num"]).toBe(1.5);
  });

  test("only fields with a default are written; the UID (the document's u) never", () => {
    const { fills } = ensureStorage(TENANT, shelves, []);
    expect(fills.map((fill) => Object.keys(fill.update.$set ?? {}))).toEqual([
      ["d.__depth"],
      ["d.__price", "d.__price:num"],
      ["d.__colours"],
      ["d.__since"],
    ]);
    expect(fillDefault(TENANT, shelves, fieldOf(shelves, "Note"))).toBeNull();
    const uid = fieldOf(shelves, "UID");
    expect(fillDefault(TENANT, shelves, { ...uid, defaultValue: "x" })).toBeNull();
  });

  test("a custom field of a standard object fills the tenant's records of it in standard_records", () => {
    const mood = customField("Users", "Mood", { type: "picklist", items: ["calm"], defaultValue: "calm" });
    const usersWithMood: ObjectDef = { ...USERS, fields: [...USERS.fields, mood] };
    const documents = [recordDocument(TENANT, USERS, stored(USERS), { FirstName: "Ada" })];
    const fill = fillDefault(TENANT, usersWithMood, mood) as ManyUpdate;
    expect(fill.collection).toBe(COLLECTION.standardRecords);
    run(fill, documents);
    expect(decodeFields([mood], roundTrip(documents[0] as Document).d)).toEqual({ Mood: "calm" });
    // The standard object's own defaulted fields were written with the record (IsActive, NULL here): kept.
    for (const each of ensureStorage(TENANT, USERS, []).fills) run(each, documents);
    expect(decodeFields(stored(USERS), roundTrip(documents[0] as Document).d)).toMatchObject({
      FirstName: "Ada",
      IsActive: null,
    });
  });
});

describe("a storage ensured: only the fields new since the object's marker", () => {
  const marker = storageMarker(TENANT, shelves.id);
  const ids = (object: ObjectDef) => stored(object).map((field) => field.id);

  test("the first time, every field is marked (the UID is the document's u, not a field of d)", () => {
    const plan = ensureStorage(TENANT, shelves, []);
    expect(plan.mark).toEqual({ $addToSet: { f: { $each: ids(shelves) } } });
    expect(plan.fills).toHaveLength(4);
    expect(marker).toEqual({
      collection: COLLECTION.objectStorage,
      filter: { _id: { t: TENANT, o: shelves.id } },
    });
  });

  test("every field marked: nothing to fill, nothing written (every start after the first)", () => {
    expect(ensureStorage(TENANT, shelves, ids(shelves))).toEqual({ fills: [], mark: null });
  });

  test("a field new since: only it is filled and marked", () => {
    const mood = customField("Users", "Mood", { type: "picklist", items: ["calm"], defaultValue: "calm" });
    const plan = ensureStorage(TENANT, { ...USERS, fields: [...USERS.fields, mood] }, ids(USERS));
    expect(plan.fills).toEqual([fillDefault(TENANT, USERS, mood) as ManyUpdate]);
    expect(plan.mark).toEqual({ $addToSet: { f: { $each: [mood.id] } } });
  });

  test("the marker's updates, run by mingo: marked once each, a deleted field unmarked; its ids read back", () => {
    const documents: Document[] = [
      roundTrip({ _id: { t: TENANT, o: shelves.id }, f: ids(shelves).slice(0, 2) }),
    ];
    const plan = ensureStorage(TENANT, shelves, markedFields(documents[0] as Document));
    updateOne(documents, marker.filter, plan.mark as Document);
    expect(markedFields(roundTrip(documents[0] as Document))).toEqual(ids(shelves));
    updateOne(documents, marker.filter, { $addToSet: { f: { $each: ids(shelves) } } });
    expect(markedFields(documents[0] as Document)).toEqual(ids(shelves));
    updateOne(documents, marker.filter, unmarkField(price));
    expect(markedFields(documents[0] as Document)).toEqual(ids(shelves).filter((id) => id !== price.id));
    expect(markedFields(null)).toEqual([]);
  });
});

describe("a field deleted: its values unset in the object's records", () => {
  const scene = () => ({
    mine: recordDocument(TENANT, shelves, stored(shelves), { Price: "9.99", Depth: 4 }),
    nullPrice: recordDocument(TENANT, shelves, stored(shelves), { Price: null }),
    older: recordDocument(TENANT, shelves, [depth], { Depth: 1 }),
    otherTenant: recordDocument(OTHER_TENANT, shelves, stored(shelves), { Price: "2" }),
    otherObject: recordDocument(TENANT, otherObject, [price], { Price: "3" }),
  });

  test("the value and a decimal's shadow go; other fields, tenants and objects keep theirs", () => {
    const unset = unsetField(TENANT, shelves, price);
    expect(unset.collection).toBe(COLLECTION.customRecords);
    const { result, after: documents } = afterUpdate(unset, scene());
    // Only the records holding the field are written (NULL is held too: the key is there).
    expect(result).toMatchObject({ matchedCount: 2, modifiedCount: 2 });
    for (const document of [documents.mine, documents.nullPrice]) {
      expect(Object.keys(document.d)).not.toContain("__price");
      expect(Object.keys(document.d)).not.toContain("__price:num");
    }
    expect(decodeFields([depth], documents.mine.d)).toEqual({ Depth: 4 });
    expect(Object.keys(documents.otherTenant.d)).toContain("__price:num");
    expect(Object.keys(documents.otherObject.d)).toContain("__price");
  });

  test("run again (a field deleted twice), it matches nothing", () => {
    const documents = Object.values(scene());
    run(unsetField(TENANT, shelves, price), documents);
    expect(run(unsetField(TENANT, shelves, price), documents)).toMatchObject({ matchedCount: 0 });
  });

  test("added again under the same name (same storage name), the field finds no old value: its default fills", () => {
    const documents = Object.values(scene());
    run(unsetField(TENANT, shelves, price), documents);
    const again = { ...price, id: crypto.randomUUID(), defaultValue: "7" };
    run(fillDefault(TENANT, shelves, again) as ManyUpdate, documents);
    expect(decodeFields([again], documents[0]?.d).Price).toBe("7");
  });
});

describe("an object deleted: its records, their unique keys and reference gates, its write gates", () => {
  test("the tenant's records of the object, in its collection, and no others", () => {
    const mine = [1, 2].map(() => recordDocument(TENANT, shelves, stored(shelves), {}));
    const others = [
      recordDocument(OTHER_TENANT, shelves, stored(shelves), {}),
      recordDocument(TENANT, otherObject, stored(otherObject), {}),
    ];
    const records = objectRecords(TENANT, shelves);
    expect(records.collection).toBe(COLLECTION.customRecords);
    expect(matching(records, [...others, ...mine])).toEqual(mine);
    expect(objectRecords(TENANT, USERS).collection).toBe(COLLECTION.standardRecords);
  });

  const key = (t: string, o: string, f: string, v: unknown) =>
    roundTrip({ _id: { t, o, f, v }, u: crypto.randomUUID() });
  const label = fieldOf(shelves, "Label");
  const values = ["a", "zzz", "", 0, -5, 1e300, true, null, ["x"]];
  const keys = {
    field: values.map((v) => key(TENANT, shelves.id, label.id, v)),
    otherField: values.map((v) => key(TENANT, shelves.id, depth.id, v)),
    otherObject: values.map((v) => key(TENANT, otherObject.id, label.id, v)),
    otherTenant: values.map((v) => key(OTHER_TENANT, shelves.id, label.id, v)),
  };
  const all = Object.values(keys).flat();

  /**
   * The filter's equalities on `_id`'s fields, without its `_id` range: mingo does not order
   * embedded documents as the server does (it orders no MinKey or MaxKey, and does not put an
   * object with fewer fields first), so it cannot run the range; the next test holds the range to
   * its form, whose meaning is the server's documented order (below).
   */
  const withoutRange = (write: ManyWrite): ManyWrite => {
    const { _id: _range, ...equalities } = write.filter;
    return { ...write, filter: equalities };
  };

  test("a field's unique keys: exactly the keys of that field of the tenant's object", () => {
    const write = uniqueKeys(TENANT, shelves.id, label.id);
    expect(write.collection).toBe(COLLECTION.recordKeys);
    expect(matching(withoutRange(write), all)).toEqual(keys.field);
  });

  test("an object's unique keys: every field's of the tenant's object, no other object's or tenant's", () => {
    expect(matching(withoutRange(uniqueKeys(TENANT, shelves.id)), all)).toEqual([
      ...keys.field,
      ...keys.otherField,
    ]);
  });

  // The server compares embedded documents pair by pair, each by its value's type (MinKey lowest,
  // MaxKey highest), then its name, then its value (docs "Comparison/Sort Order", Objects, with
  // the type step added by DOCS-14025): with `t`, `o` (and `f`) equal, MinKey and MaxKey in the
  // next field bound every value there, so the range holds exactly the keys the equalities match.
  test("the keys are one range of the _id index: from MinKey to MaxKey in the first field left open", () => {
    const { _id: range } = uniqueKeys(TENANT, shelves.id, label.id).filter as { _id: Document };
    expect(BSON.EJSON.serialize(range)).toEqual({
      $gte: { t: TENANT, o: shelves.id, f: label.id, v: { $minKey: 1 } },
      $lte: { t: TENANT, o: shelves.id, f: label.id, v: { $maxKey: 1 } },
    });
    const { _id: objectRange } = uniqueKeys(TENANT, shelves.id).filter as { _id: Document };
    expect(Object.keys(objectRange.$gte)).toEqual(["t", "o", "f"]);
  });

  test("its records' reference gates: every gate of every record of the tenant's object, no other object's or tenant's", () => {
    const gates = (t: string, o: string, u: string) =>
      [0, 17, GATES - 1].map((g) => roundTrip({ _id: { t, o, u, g }, n: 2 }));
    const mine = [...gates(TENANT, shelves.id, "shelf-1"), ...gates(TENANT, shelves.id, "")];
    const others = [
      ...gates(TENANT, otherObject.id, "shelf-1"),
      ...gates(OTHER_TENANT, shelves.id, "shelf-1"),
    ];
    const write = referenceGatesOf(TENANT, shelves.id);
    expect(write.collection).toBe(COLLECTION.referenceGates);
    expect(matching(withoutRange(write), [...others, ...mine])).toEqual(mine);
    // One range of the _id index, as the unique keys' (the order above): `u` left open after `t`, `o`.
    const { _id: range } = write.filter as { _id: Document };
    expect(BSON.EJSON.serialize(range)).toEqual({
      $gte: { t: TENANT, o: shelves.id, u: { $minKey: 1 } },
      $lte: { t: TENANT, o: shelves.id, u: { $maxKey: 1 } },
    });
  });

  test("its write gates: all GATES of them, no other object's or tenant's", () => {
    const gates = (t: string, o: string) =>
      Array.from({ length: GATES }, (_, g) => roundTrip({ _id: { t, o, g }, n: 3 }));
    const mine = gates(TENANT, shelves.id);
    const all = [...gates(TENANT, otherObject.id), ...mine, ...gates(OTHER_TENANT, shelves.id)];
    const write = objectGates(TENANT, shelves.id);
    expect(write.collection).toBe(COLLECTION.writeGates);
    expect(matching(write, all)).toEqual(mine);
  });
});

describe("the guard writes of a catalogue change (write-skew.ts)", () => {
  test("a change of an object's definition increments all its gates, upserted; one of no existing object, none", () => {
    const guards = catalogueGuards(TENANT, shelves);
    expect(guards).toEqual(guardUpdates({ kind: "changeCatalogue", tenantId: TENANT, objects: [shelves] }));
    expect(guards).toHaveLength(GATES);
    for (const guard of guards) {
      expect(guard.collection).toBe(COLLECTION.writeGates);
      expect(guard.update).toEqual({ $inc: { n: 1 } });
      expect(guard.upsert).toBe(true);
    }
    expect(catalogueGuards(TENANT, null)).toEqual([]);
  });

  test("whatever record of the object a write is of, the change writes that write's gate", () => {
    const gates = new Set(catalogueGuards(TENANT, shelves).map((guard) => JSON.stringify(guard.filter)));
    for (let i = 0; i < 500; i++) {
      const uid = crypto.randomUUID();
      const [gate] = guardUpdates({
        kind: "writeRecord",
        tenantId: TENANT,
        object: shelves,
        uid,
        references: [],
      });
      expect(gates.has(JSON.stringify(gate?.filter))).toBe(true);
      expect(gate?.filter).toEqual({ _id: { t: TENANT, o: shelves.id, g: gateOf(uid) } });
    }
  });
});
