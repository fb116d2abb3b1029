/**
 * No filter that passes the EQL checks reaches SQLite's limit of 1000 levels of expression depth
 * ("Expression tree is too large"), which would answer INTERNAL: the worst cases the limits allow
 * (support/worst-case-filters.ts: 10,000 characters, 64 levels of nesting, sub-queries 4 deep, 8 per
 * filter) compiled and run on a real SQLite database. PostgreSQL runs the same cases
 * (test/store/postgres/expression-depth.test.ts).
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { prepareFilter } from "../../../api/eql/check-filter.ts";
import { compileFilter } from "../../../api/store/sql/compile-filter.ts";
import { quoteIdent } from "../../../api/store/sql/quote-ident.ts";
import { type ColumnValue, createTableSql, encodeValue } from "../../../api/store/sqlite/record-codec.ts";
import { sqliteDialect } from "../../../api/store/sqlite/sqlite-dialect.ts";
import {
  catalogue,
  chain,
  MAX_LENGTH,
  record,
  things,
  worstCaseFilters,
} from "./support/worst-case-filters.ts";

const db = new Database(":memory:");
db.run(createTableSql(things.mapping, things));
db.run(
  `INSERT INTO ${quoteIdent(things.mapping)} VALUES (${things.fields.map(() => "?").join(", ")})`,
  things.fields.map((field) => encodeValue(field, record[field.name] ?? null)),
);

/** Runs `filter` (which must pass the checks) on SQLite; the UIDs it selects. */
function run(filter: string): string[] {
  const sql = compileFilter(prepareFilter(filter, things, catalogue), sqliteDialect, {
    tableRef: (object) => quoteIdent(object.mapping),
    alias: "r",
    now: 0,
  });
  const text = `SELECT "r"."uid" AS uid FROM ${quoteIdent(things.mapping)} AS "r" ${sql.joins.join(" ")} WHERE ${sql.where}`;
  return db
    .query<{ uid: string }, ColumnValue[]>(text)
    .all(...sql.params)
    .map((row) => row.uid);
}

test("the longest chain the text allows holds more comparisons than SQLite's depth limit", () => {
  expect(chain("AND", MAX_LENGTH).split(" AND ").length).toBeGreaterThan(1000);
});

test.each(worstCaseFilters())("$name runs", ({ filter, selects }) => {
  expect(run(filter)).toEqual(selects);
});
