// @test-engines postgres: it runs the PostgreSQL dialect's SQL on the run's private cluster, whatever TEST_STORE says, so it runs once, in the PostgreSQL pass
/**
 * No filter that passes the EQL checks reaches PostgreSQL's limits on a statement's depth
 * (max_stack_depth: "stack depth limit exceeded"; the parser's own stack: "memory exhausted"), which
 * would answer INTERNAL: the worst cases the limits allow (test/store/sql/support/worst-case-filters.ts)
 * compiled in PostgreSQL's dialect and run on a real server, over a table of the engine's column types
 * (api/store/postgres/record-codec.ts) holding one record. Far from it: PostgreSQL's parser folds an
 * AND/OR chain into one node, and the deepest of these statements (77 levels of parentheses) runs
 * at max_stack_depth's floor of 100kB as at its default of 2MB.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { prepareFilter } from "../../../api/eql/check-filter.ts";
import { postgresDialect } from "../../../api/store/postgres/postgres-dialect.ts";
import { createTableSql, encodeValue } from "../../../api/store/postgres/record-codec.ts";
import { compileFilter } from "../../../api/store/sql/compile-filter.ts";
import { quoteIdent } from "../../../api/store/sql/quote-ident.ts";
import { createTestDatabase, type TestDatabase } from "../../support/private-postgres.ts";
import { catalogue, record, things, worstCaseFilters } from "../sql/support/worst-case-filters.ts";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase("expression depth");
  await database.sql.unsafe(createTableSql(things.mapping, things));
  await database.sql.unsafe(
    `INSERT INTO ${quoteIdent(things.mapping)} VALUES (${things.fields.map((_, i) => `$${i + 1}`).join(", ")})`,
    things.fields.map((field) => encodeValue(field, record[field.name] ?? null)),
  );
});
afterAll(async () => {
  await database?.drop();
});

/** Runs `filter` (which must pass the checks) on PostgreSQL; resolves to the UIDs it selects. */
async function run(filter: string): Promise<string[]> {
  const sql = compileFilter(prepareFilter(filter, things, catalogue), postgresDialect, {
    tableRef: (object) => quoteIdent(object.mapping),
    alias: "r",
    now: 0,
  });
  const text = `SELECT "r"."uid" AS uid FROM ${quoteIdent(things.mapping)} AS "r" ${sql.joins.join(" ")} WHERE ${sql.where}`;
  const rows = (await database.sql.unsafe(postgresDialect.statement(text), sql.params)) as { uid: string }[];
  return rows.map((row) => row.uid);
}

test.each(worstCaseFilters())("$name runs", async ({ filter, selects }) => {
  expect(await run(filter)).toEqual(selects);
});
