/**
 * How field values live in PostgreSQL columns, per field type, and the DDL of
 * an object's table. The rule: a PostgreSQL type where it holds exactly the
 * values EQL and the API allow, orders them as EQL does and converts without
 * loss; otherwise the representation the record values (and SQLite) use.
 *
 * - text-like (id, reference, string, textarea, url, picklist): `text COLLATE "C"`
 *   (code-point order, ASCII-only ILIKE; see postgres-dialect.ts);
 * - multipicklist: `text[] COLLATE "C"` (membership by `&&`, items by code point);
 * - int, duration: `bigint`; boolean: `boolean`;
 * - decimal: `numeric`, unconstrained: it keeps the canonical decimal text exactly (numeric
 *   keeps the scale it is given, and canonical text has no trailing zeros), while EQL compares
 *   it as a double (`::float8`);
 * - time: `time(3)`: 00:00:00.000–23:59:59.999 in chronological (= EQL's text) order; read back
 *   without trailing zeros (`10:00:00`), padded again here;
 * - date: `text COLLATE "C"` holding `YYYY-MM-DD`: the API accepts the year 0000, which
 *   PostgreSQL's `date` refuses on input (it has 1 BC instead); fixed-width text orders as the
 *   calendar does;
 * - datetime: `bigint`, ms since the epoch (UTC), as the record values hold it: every bound
 *   literal, `NOW()` offset, keyset value and change-log value stays the same number, and
 *   comparisons are integer comparisons. A `timestamptz(3)` would hold the range too, but every
 *   bind and read would convert (`to_timestamp` goes through a double; a JavaScript Date of the
 *   year 0000 prints an ISO year PostgreSQL reads as an error), for no change in meaning.
 */
import type { FieldDef, FieldType, ObjectDef } from "../../model/catalogue.ts";
import type { FieldValue } from "../../model/record-values.ts";
import { quoteIdent } from "../sql/quote-ident.ts";

/** A column value as Bun's client binds and reads it (bigint and numeric read back as strings). */
export type PostgresColumnValue = string | number | boolean | string[] | null;

const COLUMN_TYPES: Readonly<Record<FieldType, string>> = {
  id: 'text COLLATE "C"',
  reference: 'text COLLATE "C"',
  string: 'text COLLATE "C"',
  textarea: 'text COLLATE "C"',
  url: 'text COLLATE "C"',
  picklist: 'text COLLATE "C"',
  multipicklist: 'text[] COLLATE "C"',
  int: "bigint",
  duration: "bigint",
  boolean: "boolean",
  decimal: "numeric",
  time: "time(3)",
  date: 'text COLLATE "C"',
  datetime: "bigint",
};

/** The PostgreSQL column type of a field. */
export function columnType(field: FieldDef): string {
  return COLUMN_TYPES[field.type];
}

/** A record value → its column value (bound as is: Bun's client writes arrays as PostgreSQL arrays). */
export function encodeValue(_field: FieldDef, value: FieldValue): PostgresColumnValue {
  return value;
}

/** A column value as read → its record value. */
export function decodeValue(field: FieldDef, raw: PostgresColumnValue): FieldValue {
  if (raw === null) return null;
  switch (field.type) {
    case "int":
    case "duration":
    case "datetime":
      return Number(raw);
    case "time": {
      // `10:00:00` or `10:00:00.12` → `10:00:00.000`, `10:00:00.120`.
      const [clock, fraction = ""] = String(raw).split(".");
      return `${clock}.${fraction.padEnd(3, "0")}`;
    }
    default:
      return raw;
  }
}

/** `CREATE TABLE` for an object's records: one column per field, `uid` the primary key. */
export function createTableSql(table: string, object: ObjectDef): string {
  const columns = object.fields.map(
    (field) =>
      `${quoteIdent(field.mapping)} ${columnType(field)}${field.type === "id" ? " PRIMARY KEY NOT NULL" : ""}`,
  );
  return `CREATE TABLE ${quoteIdent(table)} (${columns.join(", ")})`;
}
