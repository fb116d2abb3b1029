/**
 * Differential test: many generated filters over generated records, run both
 * through the SQL compiler in SQLite's dialect (real bun:sqlite, tables from
 * createTableSql, rows from encodeValue) and through the in-memory evaluator.
 * The UID sets must be equal. Reproduce a failure with FILTER_SEED=<seed printed>.
 * postgres-differential.test.ts does the same against PostgreSQL.
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { compileFilter } from "../../api/store/sql/compile-filter.ts";
import { quoteIdent } from "../../api/store/sql/quote-ident.ts";
import { type ColumnValue, createTableSql, encodeValue } from "../../api/store/sqlite/record-codec.ts";
import { sqliteDialect } from "../../api/store/sqlite/sqlite-dialect.ts";
import { type DifferentialEngine, runDifferential } from "./support/differential.ts";
import { testObject } from "./support/test-catalogue.ts";

const SEED = Number(process.env.FILTER_SEED ?? 20240501);
const FILTERS = Number(process.env.FILTER_COUNT ?? 10000);
const db = new Database(":memory:");
afterAll(() => db.close());

const sqlite: DifferentialEngine = {
  load(records) {
    for (const [name, rows] of records) {
      const object = testObject(name);
      db.run(createTableSql(object.mapping, object));
      const insert = db.prepare(
        `INSERT INTO ${quoteIdent(object.mapping)} VALUES (${object.fields.map(() => "?").join(", ")})`,
      );
      for (const row of rows)
        insert.run(...object.fields.map((field) => encodeValue(field, row[field.name] ?? null)));
    }
  },
  select(object, filter, now) {
    const sql = compileFilter(filter, sqliteDialect, {
      tableRef: (target) => quoteIdent(target.mapping),
      alias: "r",
      now,
    });
    const query = `SELECT "r"."uid" AS uid FROM ${quoteIdent(object.mapping)} AS "r" ${sql.joins.join(" ")} WHERE ${sql.where}`;
    return db
      .query<{ uid: string }, ColumnValue[]>(query)
      .all(...sql.params)
      .map((row) => row.uid);
  },
};

test(`SQL and the evaluator select the same records (seed ${SEED}, ${FILTERS} filters)`, async () => {
  console.log(`differential filter test: FILTER_SEED=${SEED}`);
  const result = await runDifferential(sqlite, SEED, FILTERS);
  if (result.mismatchCount > 0) console.log(`seed ${SEED}\n${result.mismatches.join("\n")}`);
  expect(result.mismatchCount).toBe(0);
  // The filters must discriminate, not select all or nothing.
  expect(result.proper).toBeGreaterThan(FILTERS * 0.3);
});
