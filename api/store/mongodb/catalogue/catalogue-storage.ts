/**
 * What a catalogue change writes besides the definitions, pure: an object and a field in, the
 * filter and update documents out (the session passes them to the driver in the unit of work).
 *
 * There is no record storage to create or drop (docs/mongodb-layout.md: the collections and
 * indexes exist from the engine's opening, and a record's fields are keys of its `d`
 * sub-document), so a storage change is a change of the records themselves:
 * - a field added gets its default (when it has one) in every record of its object that lacks
 *   it. A record written by the record members holds every field of its definition, NULL as BSON
 *   null (record-codec.ts, encodeFields), so a missing key means a record written before the
 *   field was: that is the SQL engines' ADD COLUMN … with a default, and a field whose storage
 *   exists (records holding the key, NULL included) is left as it is. Without a default nothing
 *   is written: a missing key reads as NULL (record-codec.ts);
 * - a field deleted is unset in every record of its object (its value and, for a decimal, its
 *   numeric shadow), and its unique keys are deleted: a field added again later under the same
 *   name has the same storage name, and must not find the old values;
 * - an object deleted loses its records, their unique keys and their reference gates (write-skew.ts);
 *   a field deleted leaves the reference gates alone: they belong to the records referred to, not
 *   to the field, and go when those records do.
 * `ensureObjectStorage` runs for every tenant's standard objects at every start: a marker
 * document per object (`object_storage`) lists the fields it has given the records, so a start
 * reads one document per object and scans records only for a field new since (where the SQL
 * engines look their columns up in their catalogues).
 * And each change of an existing object's definition takes all its write gates (write-skew.ts):
 * a record write made against the definition read before the change then meets a write conflict.
 */
import { MaxKey, MinKey } from "mongodb";
import { COLLECTION } from "../../../../common/store/mongodb/layout.ts";
import type { FieldDef, ObjectDef } from "../../../model/catalogue.ts";
import { defaultRecordValue } from "../../../model/field-values.ts";
import { encodeFields } from "../record-codec.ts";
import { RECORD_FIELD, recordCollectionOf } from "../records/record-layout.ts";
import { GATES, type GuardUpdate, guardUpdates } from "../write-skew.ts";

/** A write of many documents of one collection: what `updateMany` or `deleteMany` is given. */
export interface ManyWrite {
  collection: string;
  filter: Record<string, unknown>;
}

/** An `updateMany`'s arguments. */
export interface ManyUpdate extends ManyWrite {
  update: Record<string, Record<string, unknown>>;
}

/** The tenant's records of `object`, in the collection holding them. */
export function objectRecords(tenantId: string, object: Pick<ObjectDef, "id" | "custom">): ManyWrite {
  return {
    collection: recordCollectionOf(object),
    filter: { [RECORD_FIELD.tenant]: tenantId, [RECORD_FIELD.object]: object.id },
  };
}

/** The keys a field's values take in a record's values sub-document: its own, and a decimal's shadow. */
const storageKeysOf = (field: FieldDef): string[] =>
  Object.keys(encodeFields([field], {})).map((key) => `${RECORD_FIELD.values}.${key}`);

/** Fields held in the values sub-document: all but the UID, which is the document's `u`. */
const isStoredInValues = (field: FieldDef) => field.type !== "id";

/**
 * The update giving `field`'s default to the records of `object` that lack the field, or null when
 * it has no default (a missing key reads as NULL) or is the UID.
 */
export function fillDefault(tenantId: string, object: ObjectDef, field: FieldDef): ManyUpdate | null {
  if (field.defaultValue === null || !isStoredInValues(field)) return null;
  const records = objectRecords(tenantId, object);
  const values = encodeFields([field], { [field.name]: defaultRecordValue(field) });
  const $set = Object.fromEntries(
    Object.entries(values).map(([key, value]) => [`${RECORD_FIELD.values}.${key}`, value]),
  );
  const [valueKey] = storageKeysOf(field);
  return {
    ...records,
    filter: { ...records.filter, [valueKey as string]: { $exists: false } },
    update: { $set },
  };
}

/** The update removing `field`'s values (and a decimal's shadow) from the records of `object` holding one. */
export function unsetField(tenantId: string, object: ObjectDef, field: FieldDef): ManyUpdate {
  const records = objectRecords(tenantId, object);
  const keys = storageKeysOf(field);
  return {
    ...records,
    // Only the records holding the field are written (the record_fields index finds them).
    filter: { ...records.filter, $or: keys.map((key) => ({ [key]: { $exists: true } })) },
    update: { $unset: Object.fromEntries(keys.map((key) => [key, ""])) },
  };
}

/**
 * The documents of `collection` whose `_id` begins with `prefix`'s fields (in that order) and goes
 * on with `open` and what follows it: one range of the `_id` index, from MinKey to MaxKey in `open`
 * (the server compares embedded documents field by field, names included, so the order of `_id`'s
 * fields is part of the value); the equalities on `_id`'s fields say the same for a reader, and
 * keep the match exact whatever the range does.
 */
function idPrefix(collection: string, prefix: Record<string, string>, open: string): ManyWrite {
  const equalities = Object.fromEntries(Object.entries(prefix).map(([key, value]) => [`_id.${key}`, value]));
  return {
    collection,
    filter: {
      _id: { $gte: { ...prefix, [open]: new MinKey() }, $lte: { ...prefix, [open]: new MaxKey() } },
      ...equalities,
    },
  };
}

/**
 * The unique keys (record_keys) of the tenant's object, or of one of its fields: `_id` is
 * `{t, o, f, v}` in that order (layout.ts), so they are one range of it.
 */
export function uniqueKeys(tenantId: string, objectId: string, fieldId?: string): ManyWrite {
  return fieldId === undefined
    ? idPrefix(COLLECTION.recordKeys, { t: tenantId, o: objectId }, "f")
    : idPrefix(COLLECTION.recordKeys, { t: tenantId, o: objectId, f: fieldId }, "v");
}

/**
 * The reference gates (write-skew.ts) of the tenant's records of an object, to delete with them:
 * `_id` is `{t, o, u, g}` in that order (layout.ts), so they are one range of it.
 */
export function referenceGatesOf(tenantId: string, objectId: string): ManyWrite {
  return idPrefix(COLLECTION.referenceGates, { t: tenantId, o: objectId }, "u");
}

/**
 * The guard writes of a change to the catalogue of `tenantId` that alters the definition of
 * `object` (write-skew.ts, changeCatalogue: all its gates); none for a change that alters no
 * existing object's definition (a new object, tracking, an import). The tenant's catalogue
 * counter, the change's other common document, is written by bumpCatalogueVersion.
 */
export function catalogueGuards(tenantId: string, object: ObjectDef | null): GuardUpdate[] {
  const objects = object === null ? [] : [{ id: object.id, custom: object.custom }];
  return guardUpdates({ kind: "changeCatalogue", tenantId, objects });
}

/** The write gates of a deleted object, all of them (by `_id`), to delete with it. */
export function objectGates(tenantId: string, objectId: string): ManyWrite {
  const ids = Array.from({ length: GATES }, (_, g) => ({ t: tenantId, o: objectId, g }));
  return { collection: COLLECTION.writeGates, filter: { _id: { $in: ids } } };
}

/** A marker document (layout.ts, object_storage). */
export interface StorageMarkerDocument {
  _id: { t: string; o: string };
  f: string[];
}

/** The marker of the tenant's object: the fields ensureObjectStorage has given its records (by id). */
export function storageMarker(tenantId: string, objectId: string): ManyWrite {
  return { collection: COLLECTION.objectStorage, filter: { _id: { t: tenantId, o: objectId } } };
}

/** The field ids a marker document lists (none for no document). */
export function markedFields(marker: Readonly<Record<string, unknown>> | null): string[] {
  return Array.isArray(marker?.f) ? marker.f.filter((id): id is string => typeof id === "string") : [];
}

/** What ensureObjectStorage writes: the defaults of the fields new since the marker, and the marker's update (upserted). */
export interface StoragePlan {
  fills: ManyUpdate[];
  /** Null when every field is marked already: nothing is written. */
  mark: { $addToSet: { f: { $each: string[] } } } | null;
}

/**
 * The plan making `object`'s storage have every field of its definition, given the ids of the
 * fields its marker lists: a field marked is left as it is; one not is filled with its default
 * where a record lacks it (fillDefault) and marked.
 */
export function ensureStorage(tenantId: string, object: ObjectDef, marked: readonly string[]): StoragePlan {
  const done = new Set(marked);
  const fresh = object.fields.filter((field) => isStoredInValues(field) && !done.has(field.id));
  if (fresh.length === 0) return { fills: [], mark: null };
  return {
    fills: fresh.flatMap((field) => fillDefault(tenantId, object, field) ?? []),
    mark: { $addToSet: { f: { $each: fresh.map((field) => field.id) } } },
  };
}

/** The marker's update when `field` is deleted (its id no longer names storage). */
export function unmarkField(field: FieldDef): { $pull: { f: string } } {
  return { $pull: { f: field.id } };
}
