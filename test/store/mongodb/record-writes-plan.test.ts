/**
 * The MongoDB engine's record writes (api/store/mongodb/records/record-write-plan.ts, record-import-plan.ts,
 * planned-write.ts, the documents of record-documents.ts), carried out on in-memory collections by
 * mingo exactly as record-write-session.ts hands them to the driver (record-writes-memory.ts says what that
 * stand-in adds and what it does not prove: no MongoDB server can run on this machine, so no
 * index, transaction, write conflict or concurrency is proven here). Asserted: what the records
 * port promises of each write — the record document's shape and values, unique keys (a second
 * record with a value meets the first's key `_id`; NULLs have no key; an update moves a changed
 * key and writes none for an unchanged one; a delete takes its keys), references (a target is
 * read and the reference gate of the writer's UID incremented in it, a missing one is a
 * ReferenceNotFoundError before anything is written, a record may name itself without a lookup;
 * a delete or a UID change takes every reference gate of its record and deletes them), the write
 * gate of every write, imports and sequences.
 */
import { describe, expect, test } from "bun:test";
import { type Document, MongoBulkWriteError, MongoServerError } from "mongodb";
import type { FieldDef, ObjectDef } from "../../../api/model/catalogue.ts";
import type { RecordValues } from "../../../api/model/record-values.ts";
import { decodeFields } from "../../../api/store/mongodb/record-codec.ts";
import type {
  PlannedWrite,
  ResolvedReference,
  TwoStepPlan,
} from "../../../api/store/mongodb/records/planned-write.ts";
import { keyId, storedFields } from "../../../api/store/mongodb/records/record-documents.ts";
import { planImport, planSequenceImport } from "../../../api/store/mongodb/records/record-import-plan.ts";
import {
  planDelete,
  planInsert,
  planUpdate,
  referencesOf,
} from "../../../api/store/mongodb/records/record-write-plan.ts";
import { sequenceCounterId } from "../../../api/store/mongodb/records/sequence-counters.ts";
import {
  conflictingDocuments,
  GATES,
  gateOf,
  type PlannedObject,
} from "../../../api/store/mongodb/write-skew.ts";
import { ReferenceNotFoundError, UniqueViolationError } from "../../../common/errors.ts";
import { duplicateKeyIndex } from "../../../common/store/mongodb/driver-errors.ts";
import { COLLECTION } from "../../../common/store/mongodb/layout.ts";
import { customObject, newRecord, USERS } from "../conformance/fixtures.ts";
import { MemoryCollections } from "./record-writes-memory.ts";

const T = "tenant-a";
const OTHER_TENANT = "tenant-b";
const owners = customObject("Owners", {
  Name: { type: "string" },
  Code: { type: "string", unique: true },
  Rank: { type: "decimal", precision: 10, scale: 2, unique: true },
  At: { type: "datetime", unique: true },
  Parent: { type: "reference", referenceTo: "Owners", reverseName: "Children" },
});
const things = customObject("Things", {
  Name: { type: "string" },
  Tags: { type: "multipicklist", items: ["red", "x\u0000"] },
  Owner: { type: "reference", referenceTo: "Owners", reverseName: "Things" },
  Backup: { type: "reference", referenceTo: "Owners", reverseName: "BackedUp" },
});
const field = (object: ObjectDef, name: string) => object.fields.find((f) => f.name === name) as FieldDef;
const BY = "user-1";

/** The tenant's objects as the session looks them up (a name it lacks: null). */
const OBJECTS = new Map<string, PlannedObject>([
  ["Owners", { id: owners.id, custom: true }],
  ["Things", { id: things.id, custom: true }],
  ["Users", { id: USERS.id, custom: false }],
]);
const resolve = (object: ObjectDef, fields: readonly FieldDef[], values: RecordValues, self: string) =>
  referencesOf(object, fields, values, self).map(
    (reference): ResolvedReference => ({
      ...reference,
      target: OBJECTS.get(reference.field.referenceTo as string) ?? null,
    }),
  );

/** The store as the session drives it: one write of the port, in a transaction of its own. */
function memoryStore() {
  const db = new MemoryCollections();
  const twoSteps = (plan: TwoStepPlan) => {
    db.issue(plan.before);
    db.issue(plan.after(db.writeRecord(plan.record)));
  };
  const write = (work: () => void) => {
    try {
      db.transaction(work);
      return null;
    } catch (error) {
      return error;
    }
  };
  return {
    db,
    insert: (object: ObjectDef, values: RecordValues, tenantId = T) =>
      write(() =>
        db.issue(
          planInsert(tenantId, object, values, resolve(object, object.fields, values, values.UID as string)),
        ),
      ),
    update: (object: ObjectDef, uid: string, values: RecordValues, tenantId = T) =>
      write(() => {
        const fields = object.fields.filter((f) => f.name in values);
        twoSteps(planUpdate(tenantId, object, uid, values, resolve(object, fields, values, uid)));
      }),
    remove: (object: ObjectDef, uid: string, tenantId = T) =>
      write(() => twoSteps(planDelete(tenantId, object, uid))),
    /** The record documents of `object` in the tenant. */
    records: (object: ObjectDef, tenantId = T) =>
      db.find(object.custom ? COLLECTION.customRecords : COLLECTION.standardRecords, {
        t: tenantId,
        o: object.id,
      }),
    keys: () => db.find(COLLECTION.recordKeys),
    /** The reference gates of record `uid` of `object`: [gate, writes] pairs. */
    referenceGates: (object: ObjectDef, uid: string, tenantId = T) =>
      db
        .find(COLLECTION.referenceGates, { "_id.t": tenantId, "_id.o": object.id, "_id.u": uid })
        .map((gate) => [gate._id.g, gate.n]),
    gate: (object: ObjectDef, uid: string, tenantId = T) =>
      db.find(COLLECTION.writeGates, { _id: { t: tenantId, o: object.id, g: gateOf(uid) } })[0]?.n ?? 0,
    /** What was issued since `from` (a probe is a read) to `collection`. */
    issuedTo: (collection: string, from = 0) =>
      db.issued.slice(from).filter((w) => w.collection === collection),
  };
}

const owner = (values: RecordValues) => newRecord(owners, BY, values);
const thing = (values: RecordValues) => newRecord(things, BY, values);
/** A Users record named by every record's CreatedBy (it names itself). */
const userRecord = () => ({ ...newRecord(USERS, BY, { LastName: "Lovelace" }), UID: BY });

function seeded() {
  const store = memoryStore();
  expect(store.insert(USERS, userRecord())).toBeNull();
  return store;
}

describe("record documents", () => {
  test("an insert writes one document of the layout's shape: tenant, object, UID, the other values under d", () => {
    const store = seeded();
    const values = owner({ Name: "a\u0000b", Code: "k-1", Rank: "12.5", At: Date.UTC(2024, 1, 29) });
    expect(store.insert(owners, values)).toBeNull();
    const [document] = store.records(owners);
    expect(Object.keys(document as Document)).toEqual(["_id", "t", "o", "u", "d"]);
    expect(document).toMatchObject({ t: T, o: owners.id, u: values.UID });
    // The UID lives in u only; every other field under d, NUL kept as written.
    expect(Object.keys(document?.d)).not.toContain("uid");
    const read: RecordValues = {
      ...decodeFields(storedFields(owners.fields), document?.d),
      UID: document?.u,
    };
    expect(read).toEqual(values);
  });
});

describe("unique keys", () => {
  test("a second record with a unique value meets the first's key _id: a UniqueViolationError naming the field, nothing kept", () => {
    const store = seeded();
    const first = owner({ Name: "first", Code: "k-1" });
    expect(store.insert(owners, first)).toBeNull();
    expect(store.keys()).toEqual([
      { _id: { t: T, o: owners.id, f: field(owners, "Code").id, v: "k-1" }, u: first.UID },
    ]);
    const second = owner({ Name: "second", Code: "k-1" });
    const refused = store.insert(owners, second);
    expect(refused).toBeInstanceOf(UniqueViolationError);
    expect((refused as Error).message).toBe('Owners.Code must be unique: another record has "k-1"');
    expect(store.records(owners).map((r) => r.u)).toEqual([first.UID]);
    expect(store.keys()).toHaveLength(1);
  });

  test("two writes racing for one value meet at its key _id: without the probe (run before the other's commit), the key's insert clashes", () => {
    const store = seeded();
    const first = owner({ Name: "first", Code: "k-1" });
    expect(store.insert(owners, first)).toBeNull();
    const second = owner({ Name: "second", Code: "k-1" });
    const writes = planInsert(
      T,
      owners,
      second,
      resolve(owners, owners.fields, second, second.UID as string),
    );
    const [probe] = writes;
    expect(probe).toMatchObject({ kind: "probe", collection: COLLECTION.recordKeys, holder: second.UID });
    const keyInsert = writes.find((w) => w.kind === "insert" && w.collection === COLLECTION.recordKeys);
    expect(keyInsert?.kind === "insert" && keyInsert.documents.map((d) => d._id)).toEqual([
      store.keys()[0]?._id,
    ]);
    let refused: unknown = null;
    try {
      store.db.transaction(() => store.db.issue(writes.filter((w) => w.kind !== "probe")));
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(UniqueViolationError);
    expect((refused as Error).message).toBe('Owners.Code must be unique: another record has "k-1"');
    expect(store.records(owners).map((r) => r.u)).toEqual([first.UID]);
  });

  test("keys of decimals and datetimes clash on their value; the same value elsewhere (tenant, object, field, case) does not", () => {
    const store = seeded();
    const at = Date.UTC(2020, 0, 1, 12);
    expect(store.insert(owners, owner({ Code: "k-1", Rank: "2.5", At: at }))).toBeNull();
    for (const [values, name] of [
      [{ Rank: "2.5" }, "Rank"],
      [{ At: at }, "At"],
    ] as const) {
      const refused = store.insert(owners, owner(values));
      expect(refused).toBeInstanceOf(UniqueViolationError);
      expect((refused as Error).message).toContain(`Owners.${name} must be unique`);
    }
    expect(store.insert(owners, owner({ Code: "K-1", Rank: "2.51", At: at + 1 }))).toBeNull();
    expect(store.insert(owners, owner({ Name: "k-1" }))).toBeNull();
    // Another tenant: its own Users record, then the same values.
    expect(store.insert(USERS, userRecord(), OTHER_TENANT)).toBeNull();
    expect(store.insert(owners, owner({ Code: "k-1", Rank: "2.5", At: at }), OTHER_TENANT)).toBeNull();
    expect(store.keys()).toHaveLength(9);
  });

  test("NULLs never clash: a null unique value writes no key", () => {
    const store = seeded();
    for (const name of ["n1", "n2", "n3"])
      expect(store.insert(owners, owner({ Name: name, Code: null }))).toBeNull();
    expect(store.records(owners)).toHaveLength(3);
    expect(store.keys()).toEqual([]);
  });

  test("an update changing a unique value deletes the old key and inserts the new: the old value is free again", () => {
    const store = seeded();
    const a = owner({ Name: "a", Code: "k-1" });
    expect(store.insert(owners, a)).toBeNull();
    expect(store.update(owners, a.UID as string, { Code: "k-2" })).toBeNull();
    const code = field(owners, "Code");
    expect(store.keys()).toEqual([{ _id: { t: T, o: owners.id, f: code.id, v: "k-2" }, u: a.UID }]);
    expect(store.insert(owners, owner({ Code: "k-1" }))).toBeNull();
    // Set to null: the key goes, none comes.
    expect(store.update(owners, a.UID as string, { Code: null })).toBeNull();
    expect(store.keys().map((key) => key._id.v)).toEqual(["k-1"]);
    expect(decodeFields([code], store.records(owners).find((r) => r.u === a.UID)?.d)).toEqual({ Code: null });
  });

  test("an update not touching a unique value writes no key, nor does one setting the value it has", () => {
    const store = seeded();
    const a = owner({ Name: "a", Code: "k-1" });
    expect(store.insert(owners, a)).toBeNull();
    const from = store.db.issued.length;
    expect(store.update(owners, a.UID as string, { Name: "renamed" })).toBeNull();
    // Not even a probe of the keys.
    expect(store.issuedTo(COLLECTION.recordKeys, from)).toEqual([]);
    // The value it has: its own key, found by the probe, is no clash, and stays as it is.
    expect(store.update(owners, a.UID as string, { Code: "k-1", Name: "still" })).toBeNull();
    expect(store.issuedTo(COLLECTION.recordKeys, from)).toEqual([
      { collection: COLLECTION.recordKeys, kind: "probe" },
    ]);
    expect(store.keys()).toHaveLength(1);
    expect(decodeFields([field(owners, "Name")], store.records(owners)[0]?.d)).toEqual({ Name: "still" });
  });

  test("an update to a value another record holds is a UniqueViolationError and keeps nothing", () => {
    const store = seeded();
    const a = owner({ Name: "a", Code: "k-1" });
    const b = owner({ Name: "b", Code: "k-2" });
    expect(store.insert(owners, a)).toBeNull();
    expect(store.insert(owners, b)).toBeNull();
    const refused = store.update(owners, b.UID as string, { Code: "k-1", Name: "b2" });
    expect(refused).toBeInstanceOf(UniqueViolationError);
    expect((refused as Error).message).toContain("Owners.Code");
    const kept = store.records(owners).find((r) => r.u === b.UID);
    expect(decodeFields(storedFields(owners.fields), kept?.d)).toMatchObject({ Name: "b", Code: "k-2" });
    expect(store.keys().map((key) => [key._id.v, key.u])).toEqual([
      ["k-1", a.UID],
      ["k-2", b.UID],
    ]);
  });

  test("the same UID twice is a UniqueViolationError naming UID (record_uid), whether inserted or updated to", () => {
    const store = seeded();
    const a = owner({ Name: "a" });
    const b = owner({ Name: "b" });
    expect(store.insert(owners, a)).toBeNull();
    expect(store.insert(owners, b)).toBeNull();
    const again = store.insert(owners, { ...owner({ Name: "again" }), UID: a.UID as string });
    expect(again).toBeInstanceOf(UniqueViolationError);
    expect((again as Error).message).toContain("Owners.UID");
    expect(store.update(owners, b.UID as string, { UID: a.UID as string })).toBeInstanceOf(
      UniqueViolationError,
    );
    expect(store.records(owners).map((r) => r.u)).toEqual([a.UID, b.UID]);
  });

  test("an update of the UID moves every key of the record to the new UID", () => {
    const store = seeded();
    const a = owner({ Code: "k-1", Rank: "1" });
    expect(store.insert(owners, a)).toBeNull();
    expect(store.update(owners, a.UID as string, { UID: "uid-new" })).toBeNull();
    expect(store.records(owners).map((r) => r.u)).toEqual(["uid-new"]);
    expect(store.keys().map((key) => key.u)).toEqual(["uid-new", "uid-new"]);
  });

  test("a delete takes the record and its keys; deleting a missing record writes nothing", () => {
    const store = seeded();
    const a = owner({ Code: "k-1", Rank: "3" });
    const b = owner({ Code: "k-2" });
    expect(store.insert(owners, a)).toBeNull();
    expect(store.insert(owners, b)).toBeNull();
    expect(store.remove(owners, a.UID as string)).toBeNull();
    expect(store.records(owners).map((r) => r.u)).toEqual([b.UID]);
    expect(store.keys().map((key) => key._id.v)).toEqual(["k-2"]);
    expect(store.insert(owners, owner({ Code: "k-1", Rank: "3" }))).toBeNull();
    const from = store.db.issued.length;
    expect(store.remove(owners, "nobody")).toBeNull();
    expect(store.db.issued.slice(from)).toEqual([{ collection: COLLECTION.customRecords, kind: "record" }]);
  });

  test("an update of a missing record writes nothing after the record step: no key, no gate", () => {
    const store = seeded();
    const from = store.db.issued.length;
    expect(store.update(owners, "nobody", { Code: "k-1", Name: "x" })).toBeNull();
    expect(store.db.issued.slice(from)).toEqual([
      { collection: COLLECTION.recordKeys, kind: "probe" },
      { collection: COLLECTION.customRecords, kind: "record" },
    ]);
    expect(store.keys()).toEqual([]);
  });
});

describe("references", () => {
  test("a reference finds its target and increments the target's reference gate of the writer's UID; a missing target is a ReferenceNotFoundError naming the field", () => {
    const store = seeded();
    const parent = owner({ Name: "parent" });
    expect(store.insert(owners, parent)).toBeNull();
    const child = thing({ Owner: parent.UID as string, Backup: parent.UID as string });
    expect(store.insert(things, child)).toBeNull();
    // Owner and Backup name one record: one gate, written once; the parent's own document is not written.
    expect(store.referenceGates(owners, parent.UID as string)).toEqual([[gateOf(child.UID as string), 1]]);
    expect(Object.keys(store.records(owners)[0] as Document)).toEqual(["_id", "t", "o", "u", "d"]);
    const dangling = store.insert(things, thing({ Name: "dangling", Owner: "nowhere" }));
    expect(dangling).toBeInstanceOf(ReferenceNotFoundError);
    expect((dangling as ReferenceNotFoundError).message).toBe(
      "Things.Owner: no Owners record with UID 'nowhere'",
    );
    expect((dangling as ReferenceNotFoundError).details).toEqual([
      { path: "Owner", message: "no Owners record with UID 'nowhere'" },
    ]);
    const updating = store.update(things, child.UID as string, { Backup: "nowhere", Name: "moved" });
    expect(updating).toBeInstanceOf(ReferenceNotFoundError);
    const name = field(things, "Name");
    expect(store.records(things).map((r) => decodeFields([name], r.d).Name)).toEqual([null]);
    // A standard object's reference (CreatedBy → Users) is held to it too.
    const byNobody = store.insert(owners, newRecord(owners, "nobody", { Name: "by nobody" }));
    expect(byNobody).toBeInstanceOf(ReferenceNotFoundError);
    expect((byNobody as Error).message).toContain("Owners.CreatedBy");
  });

  test("another tenant's record, or an object the tenant lacks, is no target", () => {
    const store = seeded();
    expect(store.insert(USERS, userRecord(), OTHER_TENANT)).toBeNull();
    const foreign = owner({ Name: "foreign" });
    expect(store.insert(owners, foreign, OTHER_TENANT)).toBeNull();
    expect(store.insert(things, thing({ Owner: foreign.UID as string }))).toBeInstanceOf(
      ReferenceNotFoundError,
    );
    const gone = { ...field(things, "Owner"), referenceTo: "Gone" };
    const values = thing({ Owner: foreign.UID as string });
    const refs = referencesOf(things, [gone], values, values.UID as string).map((r) => ({
      ...r,
      target: null,
    }));
    expect(() => planInsert(T, things, values, refs)).toThrow(ReferenceNotFoundError);
  });

  test("a record may name itself: no target lookup, no guard write for it", () => {
    const store = seeded();
    const self = owner({ Name: "self" });
    const values = { ...self, Parent: self.UID as string };
    expect(referencesOf(owners, owners.fields, values, self.UID as string).map((r) => r.field.name)).toEqual([
      "CreatedBy",
      "LastModifiedBy",
    ]);
    const from = store.db.issued.length;
    expect(store.insert(owners, values)).toBeNull();
    // One read of the Users record CreatedBy and LastModifiedBy name, its reference gate, the record,
    // the object gate: nothing on Owners but the record itself.
    expect(store.db.issued.slice(from).map((w) => `${w.kind} ${w.collection}`)).toEqual([
      `targets ${COLLECTION.standardRecords}`,
      `updates ${COLLECTION.referenceGates}`,
      `insert ${COLLECTION.customRecords}`,
      `update ${COLLECTION.writeGates}`,
    ]);
    expect(store.referenceGates(owners, self.UID as string)).toEqual([]);
    // The Users record named itself too (its insert wrote no gate on it): this insert's gate only.
    expect(store.referenceGates(USERS, BY)).toEqual([[gateOf(self.UID as string), 1]]);
  });

  test("a child's insert and its parent's delete write one common document: the parent's reference gate of the child's UID", () => {
    const parent = owner({ Name: "parent" });
    const child = thing({ Owner: parent.UID as string });
    const insert = planInsert(T, things, child, resolve(things, things.fields, child, child.UID as string));
    const remove = planDelete(T, owners, parent.UID as string);
    const common = {
      collection: COLLECTION.referenceGates,
      filter: { _id: { t: T, o: owners.id, u: parent.UID, g: gateOf(child.UID as string) } },
    };
    const gateWrites = (writes: readonly PlannedWrite[]) =>
      writes.flatMap((w) =>
        w.kind === "updates" && w.collection === COLLECTION.referenceGates
          ? w.updates.map(({ filter }) => ({ collection: w.collection, filter }))
          : [],
      );
    expect(gateWrites(insert)).toContainEqual(common);
    const removal = remove.after({ _id: 1 });
    expect(gateWrites(removal)).toContainEqual(common);
    expect(gateWrites(removal)).toHaveLength(GATES);
    expect(
      conflictingDocuments(
        {
          kind: "deleteRecord",
          tenantId: T,
          object: { id: owners.id, custom: true },
          uid: parent.UID as string,
        },
        {
          kind: "writeRecord",
          tenantId: T,
          object: { id: things.id, custom: true },
          uid: child.UID as string,
          references: [{ object: { id: owners.id, custom: true }, uid: parent.UID as string }],
        },
      ),
    ).toEqual([common]);
  });

  test("the targets are read before anything is written: a missing one writes no gate, even outside a transaction", () => {
    const store = seeded();
    const values = thing({ Owner: "nowhere" });
    const writes = planInsert(
      T,
      things,
      values,
      resolve(things, things.fields, values, values.UID as string),
    );
    expect(writes.map((w) => `${w.kind} ${w.collection}`)).toEqual([
      `targets ${COLLECTION.standardRecords}`,
      `targets ${COLLECTION.customRecords}`,
      `updates ${COLLECTION.referenceGates}`,
      `insert ${COLLECTION.customRecords}`,
      `update ${COLLECTION.writeGates}`,
    ]);
    expect(() => store.db.issue(writes)).toThrow(ReferenceNotFoundError);
    expect(store.db.find(COLLECTION.referenceGates)).toEqual([]);
    expect(store.records(things)).toEqual([]);
  });

  test("a delete takes every reference gate of its record and deletes them: none outlives it, and a new record of the UID starts with none", () => {
    const store = seeded();
    const parent = owner({ Name: "parent" });
    expect(store.insert(owners, parent)).toBeNull();
    const children = [1, 2, 3].map((i) => thing({ Name: `c${i}`, Owner: parent.UID as string }));
    for (const child of children) expect(store.insert(things, child)).toBeNull();
    const held = new Set(children.map((child) => gateOf(child.UID as string)));
    expect(store.referenceGates(owners, parent.UID as string)).toHaveLength(held.size);
    for (const child of children) expect(store.remove(things, child.UID as string)).toBeNull();
    const from = store.db.issued.length;
    expect(store.remove(owners, parent.UID as string)).toBeNull();
    expect(store.issuedTo(COLLECTION.referenceGates, from)).toEqual([
      { collection: COLLECTION.referenceGates, kind: "updates" },
      { collection: COLLECTION.referenceGates, kind: "delete" },
    ]);
    expect(store.referenceGates(owners, parent.UID as string)).toEqual([]);
    // Deleting the children took their gates on nothing (nothing referred to them): none anywhere but the user's.
    expect(store.db.find(COLLECTION.referenceGates).map((gate) => gate._id.o)).toEqual(
      store.db.find(COLLECTION.referenceGates).map(() => USERS.id),
    );
    expect(store.insert(owners, parent)).toBeNull();
    expect(store.referenceGates(owners, parent.UID as string)).toEqual([]);
  });

  test("an update changing the UID ends the old one as a target: its reference gates taken and deleted, the new one has none", () => {
    const store = seeded();
    const parent = owner({ Name: "parent" });
    expect(store.insert(owners, parent)).toBeNull();
    const child = thing({ Owner: parent.UID as string });
    expect(store.insert(things, child)).toBeNull();
    const from = store.db.issued.length;
    expect(store.update(owners, parent.UID as string, { Name: "renamed" })).toBeNull();
    expect(store.issuedTo(COLLECTION.referenceGates, from)).toEqual([]);
    expect(store.update(owners, parent.UID as string, { UID: "uid-new" })).toBeNull();
    expect(store.issuedTo(COLLECTION.referenceGates, from).map((w) => w.kind)).toEqual(["updates", "delete"]);
    expect(store.referenceGates(owners, parent.UID as string)).toEqual([]);
    expect(store.referenceGates(owners, "uid-new")).toEqual([]);
  });
});

describe("write gates", () => {
  test("every insert, update and delete of a record increments its UID's gate, created at the first", () => {
    const store = seeded();
    const a = owner({ Name: "a" });
    expect(store.gate(owners, a.UID as string)).toBe(0);
    expect(store.insert(owners, a)).toBeNull();
    expect(store.gate(owners, a.UID as string)).toBe(1);
    expect(store.update(owners, a.UID as string, { Name: "b" })).toBeNull();
    expect(store.remove(owners, a.UID as string)).toBeNull();
    expect(store.gate(owners, a.UID as string)).toBe(3);
    expect(store.db.find(COLLECTION.writeGates, { "_id.o": owners.id })).toHaveLength(1);
  });
});

describe("copying a store", () => {
  test("imported records keep their values, write their keys and each gate once, check no reference and guard nothing", () => {
    const store = memoryStore();
    const records = Array.from({ length: 200 }, (_, i) =>
      owner({ Name: `o${i}`, Code: i % 2 === 0 ? `k-${i}` : null, Parent: "not copied yet" }),
    );
    const writes = planImport(T, owners, records);
    expect(writes.filter((w) => w.kind === "targets" || w.collection === COLLECTION.referenceGates)).toEqual(
      [],
    );
    store.db.issue(writes);
    expect(store.records(owners)).toHaveLength(200);
    expect(store.keys()).toHaveLength(100);
    const gates = new Set(records.map((r) => gateOf(r.UID as string)));
    const gateWrites = writes.flatMap((w) => (w.kind === "updates" ? w.updates : []));
    expect(gateWrites).toHaveLength(gates.size);
    expect(store.db.find(COLLECTION.writeGates).map((gate) => gate.n)).toEqual([...gates].map(() => 1));
    expect(gates.size).toBeLessThanOrEqual(GATES);
    const first = store.records(owners)[0];
    const read: RecordValues = { ...decodeFields(storedFields(owners.fields), first?.d), UID: first?.u };
    expect(read).toEqual(records[0] as RecordValues);
    expect(planImport(T, owners, [])).toEqual([]);
  });

  test("an imported duplicate is a UniqueViolationError naming the field of the document that met it", () => {
    const store = memoryStore();
    const records = [owner({ Code: "a" }), owner({ Code: "b" }), owner({ Code: "a" })];
    let refused: unknown = null;
    try {
      store.db.transaction(() => store.db.issue(planImport(T, owners, records)));
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(UniqueViolationError);
    expect((refused as Error).message).toBe('Owners.Code must be unique: another record has "a"');
    expect(store.records(owners)).toEqual([]);
  });

  test("imported sequences set the counter nextSequenceValue increments: it goes on with value + 1", () => {
    const store = memoryStore();
    store.db.issue(planSequenceImport(T, [{ name: "jobs", value: 41 }]));
    store.db.issue(
      planSequenceImport(T, [
        { name: "jobs", value: 7 },
        { name: "quotes", value: 2 },
      ]),
    );
    // nextSequenceValue's update (counter-session.ts), carried out on the imported counter.
    store.db.issue([
      {
        kind: "update",
        collection: COLLECTION.counters,
        filter: { _id: sequenceCounterId(T, "jobs") },
        update: { $inc: { n: 1 } },
        upsert: true,
      },
    ]);
    expect(store.db.find(COLLECTION.counters).map((c) => [c._id.k, c.n])).toEqual([
      ["seq:jobs", 8],
      ["seq:quotes", 2],
    ]);
  });
});

describe("duplicate keys as the driver reports them", () => {
  test("the index of the document that met a duplicate key: 0 for one document's write, the failed operation's in a bulk write", () => {
    expect(duplicateKeyIndex(new MongoServerError({ message: "E11000", code: 11000 }))).toBe(0);
    expect(duplicateKeyIndex(new MongoServerError({ message: "WriteConflict", code: 112 }))).toBeNull();
    const bulk = new MongoBulkWriteError(
      {
        message: "E11000",
        code: 11000,
        writeErrors: [{ code: 11000, index: 3, errmsg: "E11000", errInfo: {}, getOperation: () => ({}) }],
      } as never,
      { insertedCount: 3 } as never,
    );
    expect(duplicateKeyIndex(bulk)).toBe(3);
    expect(duplicateKeyIndex(new Error("E11000 duplicate key"))).toBeNull();
  });

  test("a key's _id is one value's, the same however the value is given, and BSON keeps its field order", () => {
    const rank = field(owners, "Rank");
    expect(keyId(T, owners, rank, "2.5")).toEqual(keyId(T, owners, rank, "2.5"));
    expect(Object.keys(keyId(T, owners, rank, "2.5"))).toEqual(["t", "o", "f", "v"]);
  });
});
