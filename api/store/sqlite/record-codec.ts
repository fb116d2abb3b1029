/**
 * How field values live in SQLite columns, per field type, and the DDL of an
 * object's table. Record values in memory (`RecordValues`) use:
 * datetime → ms since the epoch (number); date → "YYYY-MM-DD"; time → "HH:MM:SS.sss";
 * decimal → canonical decimal string; boolean → boolean; int/duration → integer;
 * multipicklist → string[]; id/reference → UID string; the rest → string.
 * In SQLite: datetime, int, duration, boolean (0/1) are INTEGER; multipicklist
 * is a JSON array in TEXT; everything else is TEXT.
 */
import type { FieldDef, FieldType, ObjectDef } from "../../model/catalogue.ts";
import type { FieldValue } from "../../model/record-values.ts";
import { quoteIdent } from "../sql/quote-ident.ts";

export type ColumnValue = string | number | null;

const INTEGER_TYPES: ReadonlySet<FieldType> = new Set(["datetime", "int", "duration", "boolean"]);

/** The SQLite column type of a field. */
export function columnType(field: FieldDef): "INTEGER" | "TEXT" {
  return INTEGER_TYPES.has(field.type) ? "INTEGER" : "TEXT";
}

/** A record value → its column value. */
export function encodeValue(field: FieldDef, value: FieldValue): ColumnValue {
  if (value === null) return null;
  if (field.type === "boolean") return value ? 1 : 0;
  if (field.type === "multipicklist") return JSON.stringify(value);
  return value as string | number;
}

/** A column value → its record value. */
export function decodeValue(field: FieldDef, raw: ColumnValue): FieldValue {
  if (raw === null) return null;
  if (field.type === "boolean") return raw === 1;
  if (field.type === "multipicklist") return JSON.parse(raw as string) as string[];
  return raw;
}

const columnLists = new WeakMap<readonly FieldDef[], string>();

/** `r."uid", r."name", …` for the fields read by a query over alias `r`; built once per field list. */
export function columnList(fields: readonly FieldDef[]): string {
  let list = columnLists.get(fields);
  if (list === undefined) {
    list = fields.map((field) => `r.${quoteIdent(field.mapping)}`).join(", ");
    columnLists.set(fields, list);
  }
  return list;
}

/** `CREATE TABLE` for an object's records: one column per field, `uid` the primary key. */
export function createTableSql(table: string, object: ObjectDef): string {
  const columns = object.fields.map(
    (field) =>
      `${quoteIdent(field.mapping)} ${columnType(field)}${field.type === "id" ? " PRIMARY KEY NOT NULL" : ""}`,
  );
  return `CREATE TABLE ${quoteIdent(table)} (${columns.join(", ")}) WITHOUT ROWID`;
}

/** Name of the index a field gets: unique fields a unique one, references a plain one (reverse lists, deletes). */
export function indexName(table: string, field: FieldDef): string {
  return `${table}__${field.mapping}__${field.unique ? "unique" : "idx"}`;
}
