/**
 * What each record write of the MongoDB engine writes, in order, pure: a
 * write of the records port in (with the targets of its references already
 * looked up), the ordered list of driver writes out (planned-write.ts), each saying which
 * typed error its failure means. record-write-session.ts issues them in the
 * unit of work's transaction.
 *
 * Order within a write:
 * 0. a probe of the unique keys it is about to take: one another record
 *    holds is a UniqueViolationError before anything is written (the
 *    common case; two writes racing for one key meet at its `_id`, 2.);
 * 1. the reference checks: one read of the records its references name
 *    (per record collection, in the transaction's snapshot): a target not
 *    found is a ReferenceNotFoundError, thrown before anything is written
 *    (the error is the engine's own, so the transaction goes on); then, for
 *    each record found, the reference gate of the writing record's UID
 *    (write-skew.ts: the write a delete of the target conflicts with), one
 *    bulk of upserts;
 * 2. the record document and its unique keys (`record_keys`): a key another
 *    record holds meets its `_id` (duplicate key 11000, which aborts the
 *    transaction whole), a UniqueViolationError naming the field;
 * 3. the write gate of the record's UID (write-skew.ts), always incremented;
 *    a delete (or an update changing the UID) then takes every reference
 *    gate of the record it ends and deletes them (write-skew.ts).
 * An update or a delete reads the record's keyed values as it writes the
 * record (findOneAndUpdate / findOneAndDelete, before the change), then
 * deletes the keys it no longer holds and inserts the new ones.
 */
import type { Document } from "mongodb";
import { COLLECTION } from "../../../../common/store/mongodb/layout.ts";
import type { FieldDef, ObjectDef } from "../../../model/catalogue.ts";
import type { FieldValue, RecordValues } from "../../../model/record-values.ts";
import { type GuardUpdate, guardUpdates, type PlannedObject, releasedGates } from "../write-skew.ts";
import {
  type PlannedWrite,
  plannedObject,
  type Reference,
  type ResolvedReference,
  referenceNotFound,
  type TwoStepPlan,
} from "./planned-write.ts";
import {
  keyDocument,
  keyedFields,
  keyId,
  keysProjection,
  recordDocument,
  recordFilter,
  storedValue,
  uidFieldOf,
  valuesUpdate,
} from "./record-documents.ts";
import { recordCollectionOf } from "./record-layout.ts";

/**
 * The references among `fields` that `values` set to a UID, but for one naming the record itself
 * (`selfUid`, in a field referring to `object`): a record may name itself, and needs no lookup.
 */
export function referencesOf(
  object: ObjectDef,
  fields: readonly FieldDef[],
  values: RecordValues,
  selfUid: string,
): Reference[] {
  const references: Reference[] = [];
  for (const field of fields) {
    if (field.type !== "reference" || field.referenceTo === null) continue;
    const uid = values[field.name] ?? null;
    if (uid === null || (field.referenceTo === object.name && uid === selfUid)) continue;
    references.push({ field, uid: String(uid) });
  }
  return references;
}

const toUpdate = (guard: GuardUpdate): PlannedWrite => ({
  kind: "update",
  collection: guard.collection,
  filter: guard.filter,
  update: guard.update,
  upsert: guard.upsert,
});

/** Guard updates of one collection as one bulk write, or nothing for none. */
const bulk = (collection: string, guards: readonly GuardUpdate[]): PlannedWrite[] =>
  guards.length === 0
    ? []
    : [
        {
          kind: "updates",
          collection,
          updates: guards.map(({ filter, update, upsert }) => ({ filter, update, upsert })),
        },
      ];

type FoundTarget = ResolvedReference & { target: PlannedObject };

/** The reads of the records `references` name: one per record collection, each target's `{t, o, u}`. */
function targetReads(tenantId: string, references: readonly FoundTarget[]): PlannedWrite[] {
  const reads: PlannedWrite[] = [];
  for (const custom of [false, true]) {
    const mine = references.filter((reference) => reference.target.custom === custom);
    if (mine.length === 0) continue;
    const filters = mine.map((reference) => ({ t: tenantId, o: reference.target.id, u: reference.uid }));
    const distinct = [...new Map(filters.map((filter) => [JSON.stringify(filter), filter])).values()];
    reads.push({
      kind: "targets",
      collection: recordCollectionOf({ custom }),
      filter: distinct.length === 1 ? (distinct[0] as Document) : { $or: distinct },
      targets: mine.map(({ field, uid, target }) => ({ reference: { field, uid }, o: target.id, u: uid })),
    });
  }
  return reads;
}

/**
 * The guard writes of a write of record `uid` (write-skew.ts): the reference checks (the reads of
 * its targets, then the reference gate of its UID in each) and the record's gate.
 * @throws ReferenceNotFoundError for a reference whose target object the tenant does not have.
 */
function recordGuards(
  tenantId: string,
  object: ObjectDef,
  uid: string,
  references: readonly ResolvedReference[],
): { checks: PlannedWrite[]; gate: PlannedWrite } {
  const missing = references.find((reference) => reference.target === null);
  if (missing) throw referenceNotFound(missing);
  const found = references as readonly FoundTarget[];
  const [gate, ...referenceGates] = guardUpdates({
    kind: "writeRecord",
    tenantId,
    object: plannedObject(object),
    uid,
    references: found.map((reference) => ({ object: reference.target, uid: reference.uid })),
  });
  return {
    checks: [...targetReads(tenantId, found), ...bulk(COLLECTION.referenceGates, referenceGates)],
    gate: toUpdate(gate as GuardUpdate),
  };
}

/**
 * What ends record `uid` as a target (a delete, or an update changing its UID): the object gate of
 * a delete when `withGate`, every reference gate of the record (a concurrent write referring to it
 * meets one), then their delete.
 */
function release(tenantId: string, object: ObjectDef, uid: string, withGate: boolean): PlannedWrite[] {
  const [gate, ...referenceGates] = guardUpdates({
    kind: "deleteRecord",
    tenantId,
    object: plannedObject(object),
    uid,
  });
  const released = releasedGates(tenantId, plannedObject(object), uid);
  return [
    ...(withGate ? [toUpdate(gate as GuardUpdate)] : []),
    ...bulk(COLLECTION.referenceGates, referenceGates),
    { kind: "delete", collection: released.collection, filter: released.filter },
  ];
}

export type KeyEntry = { field: FieldDef; value: FieldValue; uid: string };

/** The probe of the keys of `entries`' non-null values, to be held by `uid`: one read, or nothing. */
function keyProbe(tenantId: string, object: ObjectDef, entries: KeyEntry[], uid: string): PlannedWrite[] {
  const held = entries.filter((entry) => entry.value !== null);
  if (held.length === 0) return [];
  const ids = held.map(({ field, value }) => keyId(tenantId, object, field, value));
  return [
    {
      kind: "probe",
      collection: COLLECTION.recordKeys,
      filter: { _id: { $in: ids } },
      holder: uid,
      clashes: held.map(({ field, value }) => ({ field, value })),
    },
  ];
}

/** The keys of `entries`' non-null values: one insert, or nothing. */
export function keyInserts(tenantId: string, object: ObjectDef, entries: KeyEntry[]): PlannedWrite[] {
  const held = entries.filter((entry) => entry.value !== null);
  if (held.length === 0) return [];
  return [
    {
      kind: "insert",
      collection: COLLECTION.recordKeys,
      documents: held.map(({ field, value, uid }) => keyDocument(tenantId, object, field, value, uid)),
      clashes: held.map(({ field, value }) => ({ field, value })),
    },
  ];
}

/**
 * An insert of a record with all of `object`'s fields: the reference checks, the record, its keys,
 * its gate.
 * @throws ReferenceNotFoundError for a reference whose target object the tenant does not have.
 */
export function planInsert(
  tenantId: string,
  object: ObjectDef,
  values: RecordValues,
  references: readonly ResolvedReference[],
): PlannedWrite[] {
  const uidField = uidFieldOf(object);
  const uid = values[uidField.name] as string;
  const { checks, gate } = recordGuards(tenantId, object, uid, references);
  const keys = keyedFields(object.fields).map((field) => ({ field, value: values[field.name] ?? null, uid }));
  const record: PlannedWrite = {
    kind: "insert",
    collection: recordCollectionOf(object),
    documents: [recordDocument(tenantId, object, values)],
    clashes: [{ field: uidField, value: uid }],
  };
  return [
    ...keyProbe(tenantId, object, keys, uid),
    ...checks,
    record,
    ...keyInserts(tenantId, object, keys),
    gate,
  ];
}

/**
 * An update of the given fields of record `uid` (`values` holds at least one of `object`'s fields):
 * the reference checks; the record's `$set`, reading its keyed values as they were; then, if it
 * existed, the keys of the unique values it changed (the old one deleted, the new one inserted;
 * every key when the UID itself changed) and its gate; a UID changed also ends the old one as a
 * target (its reference gates taken and deleted, as a delete takes them).
 * @throws ReferenceNotFoundError for a reference whose target object the tenant does not have.
 */
export function planUpdate(
  tenantId: string,
  object: ObjectDef,
  uid: string,
  values: RecordValues,
  references: readonly ResolvedReference[],
): TwoStepPlan {
  const fields = object.fields.filter((field) => field.name in values);
  const uidField = uidFieldOf(object);
  const newUid = uidField.name in values ? String(values[uidField.name]) : uid;
  const { checks, gate } = recordGuards(tenantId, object, uid, references);
  const given = keyedFields(fields).map((field) => ({ field, value: values[field.name] ?? null, uid }));
  return {
    before: [...keyProbe(tenantId, object, given, uid), ...checks],
    record: {
      collection: recordCollectionOf(object),
      filter: recordFilter(tenantId, object, uid),
      update: valuesUpdate(fields, values),
      projection: keysProjection(object),
      clash: { field: uidField, value: newUid },
    },
    after(previous) {
      if (previous === null) return [];
      const stale: unknown[] = [];
      const fresh: KeyEntry[] = [];
      for (const field of keyedFields(object.fields)) {
        const old = storedValue(previous, field);
        const value = field.name in values ? (values[field.name] ?? null) : old;
        if (old === value && newUid === uid) continue;
        if (old !== null) stale.push(keyId(tenantId, object, field, old));
        fresh.push({ field, value, uid: newUid });
      }
      const deletes: PlannedWrite[] =
        stale.length === 0
          ? []
          : [{ kind: "delete", collection: COLLECTION.recordKeys, filter: { _id: { $in: stale }, u: uid } }];
      // A UID changed ends the old one as a target, as a delete of it would.
      const released = newUid === uid ? [] : release(tenantId, object, uid, false);
      return [...deletes, ...keyInserts(tenantId, object, fresh), gate, ...released];
    },
  };
}

/**
 * A delete of record `uid`: the record, reading its keyed values; then, if it existed, its keys, its
 * gate and its reference gates (all taken, then deleted).
 */
export function planDelete(tenantId: string, object: ObjectDef, uid: string): TwoStepPlan {
  return {
    before: [],
    record: {
      collection: recordCollectionOf(object),
      filter: recordFilter(tenantId, object, uid),
      update: null,
      projection: keysProjection(object),
      clash: null,
    },
    after(previous) {
      if (previous === null) return [];
      const held = keyedFields(object.fields)
        .map((field) => ({ field, value: storedValue(previous, field) }))
        .filter(({ value }) => value !== null)
        .map(({ field, value }) => keyId(tenantId, object, field, value));
      const deletes: PlannedWrite[] =
        held.length === 0
          ? []
          : [{ kind: "delete", collection: COLLECTION.recordKeys, filter: { _id: { $in: held }, u: uid } }];
      return [...deletes, ...release(tenantId, object, uid, true)];
    },
  };
}
