/**
 * SQLite's spelling of EQL (sql-dialect.ts) over the columns of
 * record-codec.ts: decimals are TEXT read `CAST(.. AS REAL)`, booleans
 * INTEGER 0/1, multipicklists JSON arrays in TEXT searched with `json_each`;
 * LIKE is SQLite's built-in one (ASCII case folding; `case_sensitive_like`
 * must stay off); `IS` is null-safe; NULLs sort lowest by themselves.
 */
import type { SqlDialect } from "../sql/sql-dialect.ts";
import type { ColumnValue } from "./record-codec.ts";

export const sqliteDialect: SqlDialect<ColumnValue> = {
  bindValue: (value, valueClass) =>
    typeof value === "boolean" ? (value ? 1 : 0) : valueClass === "number" ? Number(value) : value,

  /**
   * Text goes through `CAST(? AS TEXT)`, which SQLite evaluates once per statement: compared
   * with a column as a bare `?`, a string bound by bun:sqlite costs ~50 ns more at every row
   * scanned (measured: 16 µs against 10.5 µs for a 100-row scan). The comparisons mean the
   * same: the other side is always a column (INTEGER or TEXT) or `CAST(column AS REAL)`, whose
   * affinity decides; against an expression without affinity, the cast would make it text.
   */
  placeholder: (bound) => (typeof bound === "string" ? "CAST(? AS TEXT)" : "?"),

  comparable: (column, field) => (field.type === "decimal" ? `CAST(${column} AS REAL)` : column),
  sortKey: (column, field) => sqliteDialect.comparable(column, field),
  nullSafe: { equal: "IS", notEqual: "IS NOT" },
  like: (subject, pattern) => `${subject} LIKE ${pattern} ESCAPE '\\'`,

  includesAny(list, values, alias) {
    const exists = `EXISTS (SELECT 1 FROM json_each(${list}) AS ${alias} WHERE ${alias}."value" IN (${values.join(", ")}))`;
    return `(CASE WHEN ${list} IS NULL THEN NULL ELSE ${exists} END)`;
  },

  literals: { true: "1", false: "0", unknown: "NULL" },
  // SQLite sorts NULL lowest already.
  orderTerm: (key, direction) => `${key} ${direction}`,
  statement: (text) => text,
};
