/**
 * A whole read's statement with its values written in, so that PostgreSQL
 * plans it once per connection rather than once per request. A statement
 * whose parameters never change its best plan (a UID, the catalogue
 * version's guard) is planned afresh for its first five runs and then, its
 * generic plan costing no more, run on that plan (PostgreSQL's plan cache);
 * planning was about a third of a read's time on
 * the server (≈ 120 µs of ≈ 350 µs for the bench's W1).
 *
 * So the filter's values (constants of the tree) and the row counts (LIMIT,
 * OFFSET: numbers of the request) are written into the text, and only text
 * values of the request stay bound: a count as a parameter is planned as a
 * tenth of the table (PostgreSQL 15's guess), which made a nested list's
 * generic plan a parallel scan of the whole table, JIT-compiled (132 ms a
 * read where the planned-each-time one took 0.5 ms).
 *
 * What that costs is bounded: a text is prepared (kept by the server, about
 * 100 KB for W1's) only from its third run in a while, so one-off filter
 * values are planned once and forgotten (query-records.ts); the client keeps
 * the 1,024 statements each connection used last; and every connection is
 * replaced after CONNECTION_LIFETIME_S (common/store/postgres/postgres-engine.ts),
 * so a plan made while a table was small is not kept after it grew. The
 * tables this process fills are analyzed as they grow (table-growth.ts): a
 * plan made from a table without statistics can be a full scan per read.
 */

import type { BoundValue } from "../../../common/store/postgres/runner.ts";
import { type LiteralValue, sqlLiteral } from "../../../common/store/postgres/sql-literal.ts";
import type { ReadValue } from "../read-tree.ts";
import type { Param } from "../sql/sql-fragment.ts";
import { splitAtPlaceholders } from "./postgres-dialect.ts";

/** A statement's text between its placeholders, and what each placeholder holds. */
export interface ReadTemplate {
  readonly pieces: readonly string[];
  /** Per placeholder: the literal of a constant, or the slot whose request value goes there. */
  readonly holes: readonly ({ literal: string } | { slot: number })[];
}

/** The template of `text` (its placeholders `?`, unnumbered) whose placeholders hold `params`, in order. */
export function readTemplate(text: string, params: readonly Param<LiteralValue>[]): ReadTemplate {
  const pieces = splitAtPlaceholders(text);
  if (pieces.length !== params.length + 1)
    throw new Error(`a read's text has ${pieces.length - 1} placeholders for ${params.length} values`);
  const holes = params.map((param) => ("slot" in param ? param : { literal: sqlLiteral(param.value) }));
  return { pieces, holes };
}

/**
 * The statement for one request: numbers written in, text bound (numbered in order, after
 * `before` parameters the caller binds ahead of them), or every value written in when
 * `allLiteral` (a statement run once, unprepared). Returns the text, the values bound, and the
 * numbers written in (with the template, they tell one text from another without reading it).
 */
export function fillTemplate(
  template: ReadTemplate,
  values: readonly ReadValue[],
  before = 0,
  allLiteral = false,
): { sql: string; params: BoundValue[]; numbers: string } {
  const params: BoundValue[] = [];
  let sql = template.pieces[0] as string;
  let numbers = "";
  template.holes.forEach((hole, i) => {
    if ("literal" in hole) sql += hole.literal;
    else {
      const value = values[hole.slot] ?? null;
      if (typeof value === "number") numbers += `${value},`;
      if (typeof value === "number" || allLiteral) sql += sqlLiteral(value);
      else {
        params.push(value);
        sql += `$${before + params.length}`;
      }
    }
    sql += template.pieces[i + 1] as string;
  });
  return { sql, params, numbers };
}
