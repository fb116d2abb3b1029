/**
 * The differential test against PostgreSQL: generated filters compiled in
 * PostgreSQL's dialect, run on a real server (a database of the test's own,
 * test/support/private-postgres.ts) over tables of the engine's column types
 * (api/store/postgres/record-codec.ts), must select the records the in-memory
 * evaluator selects. Two seeds by default; FILTER_SEED=<seed> reproduces one.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { ObjectDef } from "../../api/model/catalogue.ts";
import { postgresDialect } from "../../api/store/postgres/postgres-dialect.ts";
import { createTableSql, encodeValue } from "../../api/store/postgres/record-codec.ts";
import { compileFilter } from "../../api/store/sql/compile-filter.ts";
import { quoteIdent } from "../../api/store/sql/quote-ident.ts";
import { createTestDatabase, type TestDatabase } from "../support/private-postgres.ts";
import { type DifferentialEngine, runDifferential } from "./support/differential.ts";
import { testObject } from "./support/test-catalogue.ts";

const SEEDS = process.env.FILTER_SEED ? [Number(process.env.FILTER_SEED)] : [20240501, 77];
const FILTERS = Number(process.env.FILTER_COUNT ?? 10000);

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase("eql differential");
});
afterAll(async () => {
  await database?.drop();
});

/** The engine over tables `s<seed>_<mapping>`, so each seed's records stand alone. */
function postgres(seed: number): DifferentialEngine {
  const tableOf = (object: Pick<ObjectDef, "mapping">) => `s${seed}_${object.mapping}`;
  return {
    async load(records) {
      for (const [name, rows] of records) {
        const object = testObject(name);
        await database.sql.unsafe(createTableSql(tableOf(object), object));
        const columns = object.fields.map((_, i) => `$${i + 1}`).join(", ");
        const insert = `INSERT INTO ${quoteIdent(tableOf(object))} VALUES (${columns})`;
        for (const row of rows)
          await database.sql.unsafe(
            insert,
            object.fields.map((field) => encodeValue(field, row[field.name] ?? null)),
          );
      }
    },
    async select(object, filter, now) {
      const sql = compileFilter(filter, postgresDialect, {
        tableRef: (target) => quoteIdent(tableOf(target)),
        alias: "r",
        now,
      });
      const query = `SELECT "r"."uid" AS uid FROM ${quoteIdent(tableOf(object))} AS "r" ${sql.joins.join(" ")} WHERE ${sql.where}`;
      const rows = (await database.sql.unsafe(postgresDialect.statement(query), sql.params)) as {
        uid: string;
      }[];
      return rows.map((row) => row.uid);
    },
  };
}

test.each(SEEDS)(
  `PostgreSQL and the evaluator select the same records (seed %d, ${FILTERS} filters)`,
  async (seed) => {
    const result = await runDifferential(postgres(seed), seed, FILTERS);
    console.log(
      `postgres differential: FILTER_SEED=${seed}, ${FILTERS} filters, ${result.mismatchCount} mismatches, ${Math.round(result.elapsedMs)} ms`,
    );
    if (result.mismatchCount > 0) console.log(result.mismatches.join("\n"));
    expect(result.mismatchCount).toBe(0);
    expect(result.proper).toBeGreaterThan(FILTERS * 0.3);
  },
  60_000,
);
