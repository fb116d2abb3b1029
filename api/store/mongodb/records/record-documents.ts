/**
 * The documents a record write puts in MongoDB, pure: a record's document
 * (record-layout.ts: `{t, o, u, d}`, its values through record-codec.ts),
 * the `$set` of an update, and the unique-key documents of `record_keys`
 * (`{_id: {t, o, f, v}, u}`, docs/mongodb-layout.md "Unique fields").
 *
 * The UID is kept in `u` only (indexed by record_uid, which also makes it
 * unique: no key document for it); `d` holds every other field. A unique
 * field's key is written only for a value: NULLs never clash, so a NULL has
 * no key. A key's `v` is the value as the codec writes it, so one value is
 * always one `_id` (its fields in the order t, o, f, v: the server compares
 * embedded documents field by field, in order).
 */
import type { Document } from "mongodb";
import type { FieldDef, ObjectDef } from "../../../model/catalogue.ts";
import type { FieldValue, RecordValues } from "../../../model/record-values.ts";
import { decodeValue, encodeFields, encodeValue, valueKey } from "../record-codec.ts";
import { RECORD_FIELD } from "./record-layout.ts";

/** A unique-key document's `_id`: tenant, object id, field id, value as written. */
export interface KeyId {
  t: string;
  o: string;
  f: string;
  v: unknown;
}

/** A unique-key document: the key and the UID of the record holding it. */
export interface KeyDocument {
  _id: KeyId;
  u: string;
}

/** The field holding an object's UID (type `id`). */
export function uidFieldOf(object: ObjectDef): FieldDef {
  const field = object.fields.find((candidate) => candidate.type === "id");
  if (!field) throw new Error(`${object.name} has no UID field`);
  return field;
}

/** The fields whose values live under `d`: every field but the UID (kept in `u`). */
export function storedFields(fields: readonly FieldDef[]): FieldDef[] {
  return fields.filter((field) => field.type !== "id");
}

/** The fields with a key document each: the unique ones but the UID (record_uid holds it). */
export function keyedFields(fields: readonly FieldDef[]): FieldDef[] {
  return fields.filter((field) => field.unique && field.type !== "id");
}

/** The filter of one record document: record_uid's keys. */
export function recordFilter(tenantId: string, object: ObjectDef, uid: string): Document {
  return { [RECORD_FIELD.tenant]: tenantId, [RECORD_FIELD.object]: object.id, [RECORD_FIELD.uid]: uid };
}

/** A record's document for an insert: all of `object`'s fields (absent ones null). */
export function recordDocument(tenantId: string, object: ObjectDef, values: RecordValues): Document {
  return {
    [RECORD_FIELD.tenant]: tenantId,
    [RECORD_FIELD.object]: object.id,
    [RECORD_FIELD.uid]: values[uidFieldOf(object).name] ?? null,
    [RECORD_FIELD.values]: encodeFields(storedFields(object.fields), values),
  };
}

/** The `$set` of an update of `fields` to `values`: each value (and decimal shadow) under `d`, a UID in `u`. */
export function valuesUpdate(fields: readonly FieldDef[], values: RecordValues): Document {
  const set: Document = {};
  for (const [key, value] of Object.entries(encodeFields(storedFields(fields), values)))
    set[`${RECORD_FIELD.values}.${key}`] = value;
  const uid = fields.find((field) => field.type === "id");
  if (uid) set[RECORD_FIELD.uid] = values[uid.name] ?? null;
  return { $set: set };
}

/** The `_id` of the key `value` (not null) of `field` in `object`'s records of the tenant. */
export function keyId(tenantId: string, object: ObjectDef, field: FieldDef, value: FieldValue): KeyId {
  return { t: tenantId, o: object.id, f: field.id, v: encodeValue(field, value) };
}

/** The key document of `field`'s `value` (not null), held by the record `uid`. */
export function keyDocument(
  tenantId: string,
  object: ObjectDef,
  field: FieldDef,
  value: FieldValue,
  uid: string,
): KeyDocument {
  return { _id: keyId(tenantId, object, field, value), u: uid };
}

/** The projection of a record document read for its keys: its keyed fields' values. */
export function keysProjection(object: ObjectDef): Document {
  const projection: Document = { _id: 1 };
  for (const field of keyedFields(object.fields)) projection[`${RECORD_FIELD.values}.${valueKey(field)}`] = 1;
  return projection;
}

/**
 * The value of `field` in a record document as read (null when the document or the value is
 * missing).
 * @throws StoredValueError (record-codec.ts) for a value the codec never writes.
 */
export function storedValue(document: Document | null, field: FieldDef): FieldValue {
  const values = document?.[RECORD_FIELD.values] as Document | undefined;
  return decodeValue(field, values?.[valueKey(field)]);
}
