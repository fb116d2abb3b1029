/**
 * Record values (api/model/record-values.ts) ↔ the values of a record document, per field type.
 * A record's fields live in one sub-document (the layout names it), keyed by the field's storage
 * name (`FieldDef.mapping`: `[a-z0-9_]` only), next to the shadows below. The rule, as for the SQL
 * engines: a BSON type where it holds exactly the values EQL and the API allow and orders them as
 * EQL does; otherwise the representation the record values use.
 *
 * - text-like (id, reference, string, textarea, url, picklist), date (`YYYY-MM-DD`) and time
 *   (`HH:MM:SS.sss`): BSON string. The server compares strings under the simple collation by their
 *   UTF-8 bytes, which is code-point order, EQL's; fixed-width dates and times order as the calendar
 *   and the clock do (and the API's year 0000 needs no calendar conversion).
 * - multipicklist: array of strings (`[]` is a value, not NULL); `$in` on it is "holds one of".
 * - int, duration: int32 when it fits, else int64 (`Long`): an integer column stays an integer type
 *   (2^53 − 1, the record values' largest, is exact in both). The server compares every numeric
 *   type by value.
 * - boolean: BSON boolean (false < true, as EQL orders them).
 * - datetime: BSON date (int64 ms since the epoch, UTC), exactly the record value; years 0000–9999
 *   are in range. Queries compare it with dates, never with numbers (BSON type brackets would
 *   make a number never match a date).
 * - decimal: the exact value, a `Decimal128` when its digits fit (≤ 34 significant digits, every
 *   value of a field of precision ≤ 34), else its canonical text (precision goes to 38, which
 *   SQLite's text and PostgreSQL's numeric keep exactly: no value another engine takes is refused
 *   or rounded here); AND a numeric shadow `<mapping>:num`, the value as an IEEE double. EQL
 *   compares and orders every number as a double (checked-filter.ts): `Price == 0.1` holds for a
 *   stored 0.1, and 99999999999999.99 equals the double it rounds to. A server comparison of the
 *   `Decimal128` would be exact instead (Decimal128 0.1 ≠ double 0.1) and a text one would be
 *   lexical, so filters, orders and keysets read the shadow; the exact value is only ever read back.
 * - NULL: written as BSON null; a missing field (a document written before the field was defined:
 *   adding a field rewrites no documents) reads as NULL too, and every query treats the two alike.
 *
 * Negative zero: an int's -0 is written as 0 (an integer type has no -0; SQLite and PostgreSQL
 * give back 0 as well); a datetime's -0 is the instant 0. Canonical decimal text has no -0.
 */
import { Decimal128, Long } from "mongodb";
import type { FieldDef } from "../../model/catalogue.ts";
import type { FieldValue, RecordValues } from "../../model/record-values.ts";

/** A value as it sits in a record document, ready for the driver's BSON serializer. */
export type DocumentValue = string | number | boolean | Date | Decimal128 | Long | string[] | null;

/** The sub-document of a record's values: storage name (and shadow name) → value. */
export type ValuesDocument = Record<string, DocumentValue>;

/**
 * A stored value of a type the codec never writes for its field (a document edited by hand, or
 * by another program). Not an AppError on purpose: no request can cause it, so it is answered as
 * an internal error, logged with an id.
 */
export class StoredValueError extends Error {
  constructor(field: FieldDef, raw: unknown) {
    const type = (raw as { constructor?: { name?: string } }).constructor?.name ?? typeof raw;
    super(
      `${field.objectName}.${field.name} (${field.type}) holds a value the store never writes: a ${type}`,
    );
    this.name = "StoredValueError";
  }
}

/** Decimal128's coefficient holds 34 decimal digits. */
const DECIMAL128_DIGITS = 34;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** The key a field's value has in the values sub-document: its storage name. */
export const valueKey = (field: FieldDef): string => field.mapping;

/**
 * The key of a decimal field's numeric shadow. `:` never occurs in a storage name, so no field's
 * key can be another's shadow.
 */
export const shadowKey = (field: FieldDef): string => `${field.mapping}:num`;

/** The key EQL compares and orders a field by: a decimal's shadow, any other field's own value. */
export const comparableKey = (field: FieldDef): string =>
  field.type === "decimal" ? shadowKey(field) : valueKey(field);

function significantDigits(canonical: string): number {
  return canonical.replace(/[-.]/g, "").replace(/^0+/, "").length;
}

function encodeInteger(value: number): number | Long {
  const integer = value === 0 ? 0 : value; // -0 → 0
  return integer >= INT32_MIN && integer <= INT32_MAX ? integer : Long.fromNumber(integer);
}

/** A record value of `field` → its document value. `value` is assumed valid for the field (validated input). */
export function encodeValue(field: FieldDef, value: FieldValue): DocumentValue {
  if (value === null) return null;
  switch (field.type) {
    case "int":
    case "duration":
      return encodeInteger(value as number);
    case "datetime":
      return new Date(value as number);
    case "decimal": {
      const text = value as string;
      return significantDigits(text) <= DECIMAL128_DIGITS ? Decimal128.fromString(text) : text;
    }
    case "multipicklist":
      return [...(value as string[])];
    default:
      return value as string | boolean;
  }
}

/** A decimal's shadow: the double EQL compares it as (null for null). */
export function decimalShadow(value: FieldValue): number | null {
  return value === null ? null : Number(value);
}

/** `1.50`, `1E-7`, `-1.2E+3` (Decimal128's text) → canonical decimal text (`1.5`, `0.0000001`, `-1200`). */
export function canonicalDecimalText(text: string): string | null {
  const match = /^(-)?(\d+)(?:\.(\d+))?(?:E([+-]\d+))?$/i.exec(text);
  if (!match) return null;
  const digits = `${match[2]}${match[3] ?? ""}`;
  // Position of the decimal point within `digits`, after applying the exponent.
  let point = (match[2] as string).length + Number(match[4] ?? 0);
  let padded = digits;
  if (point <= 0) {
    padded = "0".repeat(1 - point) + padded;
    point = 1;
  } else if (point > padded.length) padded = padded.padEnd(point, "0");
  const integer = padded.slice(0, point).replace(/^0+(?=\d)/, "");
  const fraction = padded.slice(point).replace(/0+$/, "");
  const canonical = fraction ? `${integer}.${fraction}` : integer;
  return match[1] && canonical !== "0" ? `-${canonical}` : canonical;
}

/** A number-like BSON value as read (a number, or an unpromoted Int32/Long/Double) → number, else null. */
function numberOf(raw: unknown): number | null {
  if (typeof raw === "number") return raw;
  if (raw instanceof Long) return raw.toNumber();
  const boxed = raw as { _bsontype?: string; valueOf?: () => unknown };
  if ((boxed?._bsontype === "Int32" || boxed?._bsontype === "Double") && typeof boxed.valueOf === "function")
    return Number(boxed.valueOf());
  return null;
}

function decodeDecimal(field: FieldDef, raw: unknown): string {
  const text =
    raw instanceof Decimal128
      ? canonicalDecimalText(raw.toString())
      : typeof raw === "string"
        ? canonicalDecimalText(raw)
        : null;
  if (text === null) throw new StoredValueError(field, raw);
  return text;
}

/**
 * A document value as the driver reads it → the record value of `field`. Absent (`undefined`) and
 * BSON null are both NULL.
 * @throws StoredValueError for a value of a type the codec never writes for the field.
 */
export function decodeValue(field: FieldDef, raw: unknown): FieldValue {
  if (raw === null || raw === undefined) return null;
  switch (field.type) {
    case "int":
    case "duration": {
      const number = numberOf(raw);
      if (number === null || !Number.isInteger(number)) throw new StoredValueError(field, raw);
      return number === 0 ? 0 : number;
    }
    case "datetime":
      if (raw instanceof Date && !Number.isNaN(raw.getTime())) return raw.getTime();
      throw new StoredValueError(field, raw);
    case "decimal":
      return decodeDecimal(field, raw);
    case "boolean":
      if (typeof raw === "boolean") return raw;
      throw new StoredValueError(field, raw);
    case "multipicklist":
      if (Array.isArray(raw) && raw.every((item) => typeof item === "string")) return [...raw];
      throw new StoredValueError(field, raw);
    default:
      if (typeof raw === "string") return raw;
      throw new StoredValueError(field, raw);
  }
}

/**
 * The values sub-document of `fields` from `values` (a field absent from `values` is written NULL),
 * with the shadows of decimal fields. Used whole for an insert, and for an update's `$set` (prefix
 * each key with the sub-document's path).
 */
export function encodeFields(fields: readonly FieldDef[], values: RecordValues): ValuesDocument {
  const document: ValuesDocument = {};
  for (const field of fields) {
    const value = values[field.name] ?? null;
    document[valueKey(field)] = encodeValue(field, value);
    if (field.type === "decimal") document[shadowKey(field)] = decimalShadow(value);
  }
  return document;
}

/**
 * The record values of `fields` read from a values sub-document (missing keys are NULL; a missing
 * sub-document reads as all NULL).
 * @throws StoredValueError (see decodeValue).
 */
export function decodeFields(
  fields: readonly FieldDef[],
  document: Readonly<Record<string, unknown>> | null | undefined,
): RecordValues {
  const values: RecordValues = {};
  for (const field of fields) values[field.name] = decodeValue(field, document?.[valueKey(field)]);
  return values;
}
