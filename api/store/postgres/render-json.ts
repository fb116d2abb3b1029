/**
 * PostgreSQL's spelling of a whole answer's JSON (../sql/render-read.ts).
 * - Objects by `json_build_object`, never `jsonb_build_object` (jsonb orders
 *   keys its own way; GraphQL's order is the selection's). A function takes at
 *   most 100 arguments, so an object of more than 50 entries is built in
 *   parts whose texts are joined.
 * - Arrays by `json_agg(… ORDER BY …)`: an aggregate's input order is only
 *   its own ORDER BY's (the sub-query's is not kept), hence the rows' sort
 *   keys selected as columns; NULL over no rows, hence `coalesce(…, '[]')`.
 * - Each field's value is JSON (`to_json`) in its GraphQL form; `to_char`
 *   prints the year 0 (1 BC) as `0001`, where JavaScript's `toISOString`
 *   prints `0000`, so that year is written out.
 * - A statement fails through `tds_read_failed()` (migrations.ts), a VOLATILE
 *   function: a constant failing expression could be evaluated at plan time.
 */

import type { FieldDef } from "../../model/catalogue.ts";
import type { JsonDialect } from "../sql/render-read.ts";
import { objectArguments } from "../sql/render-read.ts";
import { type Frag, joined, sql, sqlText } from "../sql/sql-fragment.ts";

const BROKEN = "tds_read_failed()";
/** Arguments a function call takes at most (PostgreSQL's FUNC_MAX_ARGS), so pairs per json_build_object. */
const PAIRS_PER_CALL = 50;
/** Instants `toISOString` writes with a four-digit year: 0000-01-01 to 9999-12-31. */
const FIRST_INSTANT = -62_167_219_200_000;
const LAST_INSTANT = 253_402_300_799_999;
/** 0001-01-01T00:00:00.000Z: before it, the year 0. */
const YEAR_ONE = -62_135_596_800_000;

/** An instant (ms since the epoch, bigint) as `toISOString` writes it; null stays null. */
function instant(column: string): string {
  // Whole seconds and milliseconds apart, in integers: exact for instants before 1970 too.
  const ms = `((${column} % 1000 + 1000) % 1000)`;
  const at = `(timestamp '1970-01-01' + ((${column} - ${ms}) / 1000) * interval '1 second')`;
  const clock = `to_char(${at}, '-MM-DD"T"HH24:MI:SS.')`;
  const year = `CASE WHEN ${column} < ${YEAR_ONE} THEN '0000' ELSE to_char(${at}, 'YYYY') END`;
  return `to_json(${year} || ${clock} || lpad(${ms}::text, 3, '0') || 'Z')`;
}

/** A column's value in the GraphQL form of its field's scalar (scalars.ts), as JSON. */
function scalar(field: FieldDef, column: string): string {
  switch (field.type) {
    case "int":
      return `CASE WHEN ${column} BETWEEN -2147483648 AND 2147483647 THEN to_json(${column})
        WHEN ${column} IS NOT NULL THEN ${BROKEN} END`;
    case "datetime":
      return `CASE WHEN ${column} BETWEEN ${FIRST_INSTANT} AND ${LAST_INSTANT} THEN ${instant(column)}
        WHEN ${column} IS NOT NULL THEN ${BROKEN} END`;
    case "decimal":
      // As stored: numeric keeps the canonical text's digits.
      return `to_json(${column}::text)`;
    case "time":
      return `to_json(to_char(${column}::interval, 'HH24:MI:SS.MS'))`;
    default:
      // Text (strings, UIDs, dates), booleans, durations, multipicklists (text[] → an array).
      return `to_json(${column})`;
  }
}

/** Entries in calls of at most 50 pairs, their texts joined into one object (`{…` + `, ` + `…}`). */
function object<V>(entries: readonly (readonly [string, Frag<V>])[]): Frag<V> {
  const calls: Frag<V>[] = [];
  for (let i = 0; i < entries.length || i === 0; i += PAIRS_PER_CALL)
    calls.push(sql`json_build_object(${objectArguments(entries.slice(i, i + PAIRS_PER_CALL))})`);
  if (calls.length === 1) return calls[0] as Frag<V>;
  const texts = calls.map((call, i) => {
    const text = sql`${call}::text`;
    if (i === 0) return sql`left(${text}, -1)`;
    return i === calls.length - 1 ? sql`substr(${text}, 2)` : sql`substr(left(${text}, -1), 2)`;
  });
  return sql`(${joined(texts, " || ', ' || ")})::json`;
}

export const postgresJson: JsonDialect = {
  object,
  constant: (value) => (typeof value === "boolean" ? String(value) : `${sqlText(value)}::text`),
  scalar,
  broken: BROKEN,
  nested: (select) => sql`(${select})`,
  array: (element, order) => sql`coalesce(json_agg(${element} ORDER BY ${order}), '[]'::json)`,
  ordersArrays: true,
  truth: (condition) => sql`(${condition})`,
  boundCount: "?::int8",
  statement: (answer) => sql`SELECT (${answer})::text`,
};
