/**
 * What each record write of the MongoDB engine writes, in order, pure: a
 * write of the records port in (with the targets of its references already
 * looked up), the ordered list of driver writes out, each saying which
 * typed error its failure means. record-write-session.ts issues them in the
 * unit of work's transaction.
 *
 * Order within a write:
 * 0. a probe of the unique keys it is about to take: one another record
 *    holds is a UniqueViolationError before anything is written (the
 *    common case; two writes racing for one key meet at its `_id`, 2.);
 * 1. the reference checks: each increments its target record's guard count
 *    `w` (write-skew.ts: the write a delete of the target conflicts with),
 *    and a target that matches nothing is a ReferenceNotFoundError, thrown
 *    before the record is written (the error is the engine's own, so the
 *    transaction goes on: the failed write keeps nothing but those guard
 *    counts, which no read shows);
 * 2. the record document and its unique keys (`record_keys`): a key another
 *    record holds meets its `_id` (duplicate key 11000, which aborts the
 *    transaction whole), a UniqueViolationError naming the field;
 * 3. the write gate of the record's UID (write-skew.ts), always incremented.
 * An update or a delete reads the record's keyed values as it writes the
 * record (findOneAndUpdate / findOneAndDelete, before the change), then
 * deletes the keys it no longer holds and inserts the new ones.
 */
import type { Document } from "mongodb";
import { ReferenceNotFoundError, UniqueViolationError } from "../../../common/errors.ts";
import { COLLECTION } from "../../../common/store/mongodb/layout.ts";
import type { FieldDef, ObjectDef } from "../../model/catalogue.ts";
import type { FieldValue, RecordValues } from "../../model/record-values.ts";
import type { SequenceValue } from "../ports/records-port.ts";
import { sequenceCounterId } from "./counter-session.ts";
import { duplicateKeyIndex } from "./driver-errors.ts";
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
import { type GuardUpdate, gateOf, guardUpdates, type PlannedObject } from "./write-skew.ts";

/** The value a document of a write holds for a unique field, should the write meet a duplicate key. */
export interface UniqueClash {
  field: FieldDef;
  value: FieldValue;
}

/** A reference a write sets: its field and the UID it names. */
export interface Reference {
  field: FieldDef;
  uid: string;
}

/** A reference with its target object looked up: null when the tenant has no object of that name. */
export interface ResolvedReference extends Reference {
  target: PlannedObject | null;
}

/** One driver write, in the order the plan lists them. */
export type PlannedWrite =
  | {
      kind: "insert";
      collection: string;
      documents: Document[];
      /** Per document: the unique value a duplicate key on it means. */
      clashes: readonly UniqueClash[];
    }
  | {
      kind: "update";
      collection: string;
      filter: Document;
      update: Document;
      upsert: boolean;
      /** The reference this write checks: matching no document is a ReferenceNotFoundError. */
      reference: Reference | null;
    }
  | {
      /**
       * A read of the keys a write is about to take (`filter` on their `_id`s): one held by another
       * record than `holder` is the UniqueViolationError of its field (`clashes`, by field), thrown
       * before anything is written, so the transaction goes on (a duplicate key would abort it).
       */
      kind: "probe";
      collection: string;
      filter: Document;
      holder: string;
      clashes: readonly UniqueClash[];
    }
  | {
      /** Updates of one collection sent together (one bulk write, in order), none checking a reference. */
      kind: "updates";
      collection: string;
      updates: { filter: Document; update: Document; upsert: boolean }[];
    }
  | { kind: "delete"; collection: string; filter: Document };

/** The write of the record document itself, which reads its keyed values as they were. */
export interface RecordStep {
  collection: string;
  filter: Document;
  /** The update; none for a delete. */
  update: Document | null;
  /** The fields to read back: the keyed values. */
  projection: Document;
  /** What a duplicate key on the record means (a UID taken); none for a delete. */
  clash: UniqueClash | null;
}

/** An update or a delete: the writes before the record's, the record's, and those that follow from what it held. */
export interface TwoStepPlan {
  before: PlannedWrite[];
  record: RecordStep;
  /** The writes after the record step, given the record as it was before (null: there was none, nothing follows). */
  after(previous: Document | null): PlannedWrite[];
}

const planned = (object: ObjectDef): PlannedObject => ({ id: object.id, custom: object.custom });

/** A reference naming no record of its target, as the other engines word it. */
export function referenceNotFound({ field, uid }: Reference): ReferenceNotFoundError {
  const message = `no ${field.referenceTo} record with UID '${uid}'`;
  return new ReferenceNotFoundError(`${field.objectName}.${field.name}: ${message}`, [
    { path: field.name, message },
  ]);
}

/** A unique value another record holds, as the other engines word it. */
function uniqueViolation({ field, value }: UniqueClash): UniqueViolationError {
  return new UniqueViolationError(
    `${field.objectName}.${field.name} must be unique: another record has ${JSON.stringify(value)}`,
  );
}

/**
 * The error a failed write means: a UniqueViolationError when it met a duplicate key on a document
 * the plan gave a clash (`clashes`, by the document's index in the write), else `error` as it was
 * (a write conflict, above all, must reach the unit of work as it is, to be run again).
 */
export function writeFailure(error: unknown, clashes: readonly (UniqueClash | null)[]): unknown {
  const index = duplicateKeyIndex(error);
  const clash = index === null ? null : (clashes[index] ?? null);
  return clash ? uniqueViolation(clash) : error;
}

/** The error the keys a probe found mean (as read: `_id` and `u`): a UniqueViolationError, or null when none is another record's. */
export function probeFailure(
  found: readonly Document[],
  probe: Extract<PlannedWrite, { kind: "probe" }>,
): UniqueViolationError | null {
  for (const key of found) {
    if (key.u === probe.holder) continue;
    const clash = probe.clashes.find((candidate) => candidate.field.id === key._id?.f);
    if (clash) return uniqueViolation(clash);
  }
  return null;
}

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

const toUpdate = (guard: GuardUpdate, reference: Reference | null): PlannedWrite => ({
  kind: "update",
  collection: guard.collection,
  filter: guard.filter,
  update: guard.update,
  upsert: guard.upsert,
  reference,
});

/**
 * The guard writes of a write of record `uid` (write-skew.ts): each reference's check (its target's
 * guard count) and the record's gate.
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
  const write = (targets: ResolvedReference[]) =>
    guardUpdates({
      kind: "writeRecord",
      tenantId,
      object: planned(object),
      uid,
      references: targets.map((target) => ({ object: target.target as PlannedObject, uid: target.uid })),
    });
  const [gate] = write([]);
  // One reference at a time, so each check knows its field; one naming the record itself has no guard.
  const checks = references.flatMap((reference) => {
    const [, guard] = write([reference]);
    return guard ? [toUpdate(guard, reference)] : [];
  });
  return { checks, gate: toUpdate(gate as GuardUpdate, null) };
}

type KeyEntry = { field: FieldDef; value: FieldValue; uid: string };

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
function keyInserts(tenantId: string, object: ObjectDef, entries: KeyEntry[]): PlannedWrite[] {
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
 * every key when the UID itself changed) and its gate.
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
      return [...deletes, ...keyInserts(tenantId, object, fresh), gate];
    },
  };
}

/** A delete of record `uid`: the record, reading its keyed values; then, if it existed, its keys and its gate. */
export function planDelete(tenantId: string, object: ObjectDef, uid: string): TwoStepPlan {
  const [gate] = guardUpdates({ kind: "deleteRecord", tenantId, object: planned(object), uid });
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
      return [...deletes, toUpdate(gate as GuardUpdate, null)];
    },
  };
}

/**
 * Copying a store: records of `object` as another store read them (every field), with their keys
 * and the gates of their UIDs (each once); no reference check, no guard count.
 */
export function planImport(
  tenantId: string,
  object: ObjectDef,
  records: readonly RecordValues[],
): PlannedWrite[] {
  if (records.length === 0) return [];
  const uidField = uidFieldOf(object);
  const keyed = keyedFields(object.fields);
  const keys: KeyEntry[] = [];
  const gates = new Map<number, GuardUpdate>();
  for (const values of records) {
    const uid = values[uidField.name] as string;
    for (const field of keyed) keys.push({ field, value: values[field.name] ?? null, uid });
    if (gates.has(gateOf(uid))) continue;
    const [gate] = guardUpdates({
      kind: "writeRecord",
      tenantId,
      object: planned(object),
      uid,
      references: [],
    });
    gates.set(gateOf(uid), gate as GuardUpdate);
  }
  const inserted: PlannedWrite = {
    kind: "insert",
    collection: recordCollectionOf(object),
    documents: records.map((values) => recordDocument(tenantId, object, values)),
    clashes: records.map((values) => ({ field: uidField, value: values[uidField.name] ?? null })),
  };
  const gateUpdates: PlannedWrite = {
    kind: "updates",
    collection: COLLECTION.writeGates,
    updates: [...gates.values()].map(({ filter, update, upsert }) => ({ filter, update, upsert })),
  };
  return [inserted, ...keyInserts(tenantId, object, keys), gateUpdates];
}

/** Copying a store: each sequence's counter set to the last value it handed out (created if need be). */
export function planSequenceImport(tenantId: string, sequences: readonly SequenceValue[]): PlannedWrite[] {
  if (sequences.length === 0) return [];
  const updates = sequences.map(({ name, value }) => ({
    filter: { _id: sequenceCounterId(tenantId, name) },
    update: { $set: { n: value } },
    upsert: true,
  }));
  return [{ kind: "updates", collection: COLLECTION.counters, updates }];
}
