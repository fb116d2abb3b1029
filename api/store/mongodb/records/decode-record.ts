/**
 * A record document as the engine reads it back (record-layout.ts: `{t, o, u: UID, d: values}`)
 * → the port's record values: the UID from `u`, every other field from `d` through the record
 * codec; and a document a list pipeline hands back (query/list-pipeline.ts) → record values with
 * what its joined lookups found (LOOKUPS). The one decoding every record read uses, and the one the
 * compiler's differential tests read the pipelines' answers with.
 */
import type { Document } from "mongodb";
import type { FieldDef } from "../../../model/catalogue.ts";
import type { RecordValues } from "../../../model/record-values.ts";
import { type JoinedLookup, type ListedRecord, LOOKUPS, type WithLookups } from "../../ports/records-port.ts";
import { readSortKey } from "../query/keyset.ts";
import { JOINED_FIELD } from "../query/mql-layout.ts";
import { decodeValue, valueKey } from "../record-codec.ts";
import { RECORD_FIELD } from "./record-layout.ts";

/**
 * The record values of `fields` a record document holds: an `id` field (the UID) from the
 * document's UID, every other field from its values sub-document (a missing key, or a missing
 * sub-document, reads as NULL).
 * @throws StoredValueError (record-codec.ts) for a value of a type the codec never writes.
 */
export function decodeRecord(fields: readonly FieldDef[], document: Document): RecordValues {
  const stored = document[RECORD_FIELD.values] as Document | null | undefined;
  const values: RecordValues = {};
  for (const field of fields)
    values[field.name] = decodeValue(
      field,
      field.type === "id" ? document[RECORD_FIELD.uid] : stored?.[valueKey(field)],
    );
  return values;
}

/**
 * A document of a list or related-list pipeline → the record values of `fields`, carrying under
 * LOOKUPS, by reference name, each joined lookup's target (its `fields`) or null when the reference
 * is empty or names no record (the pipeline leaves null at `JOINED_FIELD.<reference key>`). Without
 * lookups asked for, no LOOKUPS at all, as the other engines answer.
 * @throws StoredValueError, as `decodeRecord`.
 */
export function decodeListed(
  fields: readonly FieldDef[],
  lookups: readonly JoinedLookup[] | undefined,
  document: Document,
): RecordValues {
  const values = decodeRecord(fields, document);
  if (!lookups || lookups.length === 0) return values;
  const joined = (document[JOINED_FIELD] ?? {}) as Document;
  const found: Record<string, RecordValues | null> = {};
  for (const lookup of lookups) {
    const target = joined[valueKey(lookup.reference)] as Document | null | undefined;
    found[lookup.reference.name] = target == null ? null : decodeRecord(lookup.fields, target);
  }
  (values as WithLookups)[LOOKUPS] = found;
  return values;
}

/**
 * A document of a list pipeline → the listed record: its values (as `decodeListed`) and its sort-key
 * values, as a cursor carries them (query/keyset.ts).
 * @throws StoredValueError, as `decodeRecord`.
 */
export function listedRecordOf(
  fields: readonly FieldDef[],
  lookups: readonly JoinedLookup[] | undefined,
  document: Document,
): ListedRecord {
  return { values: decodeListed(fields, lookups, document), sortKey: readSortKey(document) };
}
