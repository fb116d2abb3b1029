/**
 * The query documents of the record reads that need no compiled filter (record-read-session.ts):
 * records by UID, a record by a field's value, the records pointing at a UID, and the projection of
 * the fields a read asks for. Each starts from the layout's scope, one tenant's records of one
 * object, so another tenant's record or another object's with the same UID or value is never read.
 * Values are compared as the compiler compares an equality (query/compile-condition.ts): through
 * the field's comparable form (a decimal's double shadow, a datetime's BSON date).
 */
import type { Document } from "mongodb";
import type { ScalarValue } from "../../../eql/checked-filter.ts";
import { VALUE_CLASS } from "../../../eql/coerce-literal.ts";
import type { FieldDef, ObjectDef } from "../../../model/catalogue.ts";
import type { FieldValue } from "../../../model/record-values.ts";
import type { MqlLayout } from "../query/mql-layout.ts";
import { queryValue } from "../query/mql-values.ts";
import { comparableKey, encodeValue, valueKey } from "../record-codec.ts";

/** Where a field is compared: a UID at the layout's UID path, any other field under the values. */
function comparablePath(layout: MqlLayout, field: FieldDef): string {
  return field.type === "id" ? layout.uidPath : `${layout.valuesPath}.${comparableKey(field)}`;
}

/** The value a query compares a field's value as: a multipicklist's whole array, else its scalar's query form. */
function comparableValue(field: FieldDef, value: Exclude<FieldValue, null>): unknown {
  if (Array.isArray(value)) return encodeValue(field, value);
  return queryValue(value as ScalarValue, VALUE_CLASS[field.type]);
}

/** The records of `object` whose UID is one of `uids` (each once, whatever the repeats). */
export function byUidsQuery(layout: MqlLayout, object: ObjectDef, uids: readonly string[]): Document {
  return { ...layout.scope(object), [layout.uidPath]: { $in: [...new Set(uids)] } };
}

/**
 * The records of `object` whose `field` equals `value`, other than the record `exceptUid`; null
 * for a null value, which equals nothing (a query for null would match every record without one).
 */
export function byValueQuery(
  layout: MqlLayout,
  object: ObjectDef,
  field: FieldDef,
  value: FieldValue,
  exceptUid?: string,
): Document | null {
  if (value === null) return null;
  const query: Document = { ...layout.scope(object) };
  query[comparablePath(layout, field)] = { $eq: comparableValue(field, value) };
  // A UID field compared and excepted: both conditions on the one path.
  if (exceptUid !== undefined) query[layout.uidPath] = { ...query[layout.uidPath], $ne: exceptUid };
  return query;
}

/** The records of `source` whose reference `field` names the record `uid`. */
export function referencingQuery(
  layout: MqlLayout,
  source: ObjectDef,
  field: FieldDef,
  uid: string,
): Document {
  return { ...layout.scope(source), [`${layout.valuesPath}.${valueKey(field)}`]: { $eq: uid } };
}

/** What a read of `fields` keeps of a record document: its UID and those fields' values (a decimal's exact value, not its shadow). */
export function fieldsProjection(layout: MqlLayout, fields: readonly FieldDef[]): Document {
  const kept: Document = { _id: 0, [layout.uidPath]: 1 };
  for (const field of fields) if (field.type !== "id") kept[`${layout.valuesPath}.${valueKey(field)}`] = 1;
  return kept;
}
