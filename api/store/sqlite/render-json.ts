/**
 * SQLite's spelling of a whole answer's JSON (../sql/render-read.ts):
 * objects by `json_object`, arrays by `json_group_array` over an ordered
 * sub-query (SQLite feeds an aggregate the rows of such a sub-query in its
 * order, which the tests hold it to; each of these sub-queries has a LIMIT,
 * which keeps SQLite from flattening it into the aggregate), nested answers
 * wrapped in `json(…)` so they are embedded, not quoted. A statement fails on
 * `json('!')` (malformed JSON).
 */

import { BOUND_COUNT } from "../../../common/store/sqlite/bound-count.ts";
import type { FieldDef } from "../../model/catalogue.ts";
import type { JsonDialect } from "../sql/render-read.ts";
import { objectArguments } from "../sql/render-read.ts";
import { sql, sqlText } from "../sql/sql-fragment.ts";

/** Malformed JSON: evaluating it fails the statement. */
const BROKEN = "json('!')";
/** Instants the GraphQL form (`toISOString`) writes with a four-digit year: 0000-01-01 to 9999-12-31. */
const FIRST_INSTANT = -62_167_219_200_000;
const LAST_INSTANT = 253_402_300_799_999;

/** A column's value in the GraphQL form of its field's scalar (scalars.ts). */
function scalar(field: FieldDef, column: string): string {
  switch (field.type) {
    case "boolean":
      return `json(CASE ${column} WHEN 1 THEN 'true' WHEN 0 THEN 'false' END)`;
    case "multipicklist":
      return `json(${column})`;
    case "int":
      return `CASE WHEN ${column} IS NULL OR ${column} BETWEEN -2147483648 AND 2147483647 THEN ${column} ELSE ${BROKEN} END`;
    case "datetime": {
      // Whole seconds and milliseconds apart, in integers: exact for instants before 1970 too.
      const ms = `((${column} % 1000 + 1000) % 1000)`;
      const seconds = `(${column} - ${ms}) / 1000`;
      return `CASE WHEN ${column} BETWEEN ${FIRST_INSTANT} AND ${LAST_INSTANT}
        THEN strftime('%Y-%m-%dT%H:%M:%S', ${seconds}, 'unixepoch') || printf('.%03dZ', ${ms})
        WHEN ${column} IS NOT NULL THEN ${BROKEN} END`;
    }
    default:
      // Text (strings, UIDs, dates, times, decimals) and whole numbers (durations): as stored.
      return column;
  }
}

export const sqliteJson: JsonDialect = {
  object: (entries) => sql`json_object(${objectArguments(entries)})`,
  constant: (value) => (typeof value === "boolean" ? `json('${value}')` : sqlText(value)),
  scalar,
  broken: BROKEN,
  nested: (select) => sql`json((${select}))`,
  array: (element) => sql`json_group_array(${element})`,
  ordersArrays: false,
  truth: (condition) => sql`json(CASE WHEN ${condition} THEN 'true' ELSE 'false' END)`,
  boundCount: BOUND_COUNT,
  statement: (answer) => sql`SELECT ${answer}`,
};
