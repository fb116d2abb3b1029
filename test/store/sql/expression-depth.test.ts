/**
 * No filter that passes the EQL checks reaches SQLite's limit of 1000 levels of expression depth
 * ("Expression tree is too large"), which would answer INTERNAL: the worst cases the limits allow
 * (10,000 characters, 64 levels of nesting, sub-queries 4 deep, 8 per filter) compiled and run on a
 * real SQLite database. Comparisons use a one-letter field, so the text holds as many as it can.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { MAX_SUBQUERIES, MAX_SUBQUERY_DEPTH, prepareFilter } from "../../../api/eql/check-filter.ts";
import { MAX_FILTER_DEPTH } from "../../../api/eql/parse-filter.ts";
import type { Catalogue } from "../../../api/model/catalogue.ts";
import { standardObject } from "../../../api/model/field-factory.ts";
import { compileFilter } from "../../../api/store/sql/compile-filter.ts";
import { quoteIdent } from "../../../api/store/sql/quote-ident.ts";
import { type ColumnValue, createTableSql } from "../../../api/store/sqlite/record-codec.ts";
import { sqliteDialect } from "../../../api/store/sqlite/sqlite-dialect.ts";

const MAX_LENGTH = 10_000;
const things = standardObject("Xs", "X", { A: { type: "int" }, B: { type: "decimal" } });
const catalogue: Catalogue = { tenantId: "t1", version: 1, objects: [things] };
const db = new Database(":memory:");
db.run(createTableSql(things.mapping, things));

/** Runs `filter` (which must pass the checks) on SQLite; resolves to the UIDs it selects. */
function run(filter: string): string[] {
  expect(filter.length).toBeLessThanOrEqual(MAX_LENGTH);
  const sql = compileFilter(prepareFilter(filter, things, catalogue), sqliteDialect, {
    tableRef: (object) => quoteIdent(object.mapping),
    alias: "r",
    now: 0,
  });
  const text = `SELECT "r"."uid" AS uid FROM "xs" AS "r" ${sql.joins.join(" ")} WHERE ${sql.where}`;
  return db
    .query<{ uid: string }, ColumnValue[]>(text)
    .all(...sql.params)
    .map((row) => row.uid);
}

/** `A==1 AND A==1 ...` as long as `length` allows. */
const chain = (word: "AND" | "OR", length: number) => {
  const count = Math.max(1, Math.floor((length + word.length + 2) / (word.length + 6)));
  return Array(count).fill("A==1").join(` ${word} `);
};

/** Where the 4 sub-queries sit among the 64 levels: SQLite counts what is inside a sub-query once more per sub-query around it. */
const PLACES = {
  outermost: (level: number) => level < MAX_SUBQUERY_DEPTH,
  innermost: (level: number) => level >= MAX_FILTER_DEPTH - MAX_SUBQUERY_DEPTH,
  spread: (level: number) => level % (MAX_FILTER_DEPTH / MAX_SUBQUERY_DEPTH) === 0,
};

/**
 * 64 levels of nesting, 4 of them sub-queries; each level a chain of `width` operands with the deeper
 * level first (parsed left to right, the first operand is the deepest), the leaf a chain as long as
 * the rest of the text allows.
 */
function deepest(width: number, leafWord: "AND" | "OR", isSubquery: (level: number) => boolean): string {
  let open = "";
  let close = "";
  for (let level = 0; level < MAX_FILTER_DEPTH; level++) {
    const rest = ` ${level % 2 ? "AND" : "OR"} B==1`.repeat(width - 1);
    open += isSubquery(level) ? "UID IN (SELECT UID FROM Xs WHERE " : "(";
    close = `${rest})${close}`;
  }
  return `${open}${chain(leafWord, MAX_LENGTH - open.length - close.length)}${close}`;
}

test("the longest chain of comparisons the text allows runs", () => {
  const and = chain("AND", MAX_LENGTH);
  expect(and.split(" AND ").length).toBeGreaterThan(1000);
  expect(run(and)).toEqual([]);
  expect(run(chain("OR", MAX_LENGTH))).toEqual([]);
});

describe.each(Object.entries(PLACES))("64 levels of nesting, the sub-queries %s", (_, place) => {
  test.each([1, 2, 3, 4, 5, 8, 16])("chains of %i at each level run", (width) => {
    for (const word of ["AND", "OR"] as const) {
      const filter = deepest(width, word, place);
      if (filter.length > MAX_LENGTH) return;
      expect(run(filter)).toEqual([]);
    }
  });
});

test("NOT 64 levels deep around the most sub-queries nested as deep as allowed runs", () => {
  const nested = `${"UID IN (SELECT UID FROM Xs WHERE ".repeat(MAX_SUBQUERY_DEPTH)}A==1${")".repeat(MAX_SUBQUERY_DEPTH)}`;
  const siblings = Array(MAX_SUBQUERIES - MAX_SUBQUERY_DEPTH).fill("UID IN (SELECT UID FROM Xs WHERE B==1)");
  const inner = [nested, ...siblings].join(" OR ");
  expect(run(`${"NOT ".repeat(MAX_FILTER_DEPTH - MAX_SUBQUERY_DEPTH - 1)}(${inner})`)).toEqual([]);
});
