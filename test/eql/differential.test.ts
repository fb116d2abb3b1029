/**
 * Differential test: many generated filters over generated records, run both
 * through the SQLite compiler (real bun:sqlite, tables from createTableSql,
 * rows from encodeValue) and through the in-memory evaluator. The UID sets
 * must be equal. Reproduce a failure with FILTER_SEED=<seed printed>.
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { prepareFilter } from "../../api/eql/check-filter.ts";
import { type EvaluationContext, evaluateFilter } from "../../api/eql/evaluate-filter.ts";
import type { ObjectDef } from "../../api/model/catalogue.ts";
import type { RecordValues } from "../../api/model/record-values.ts";
import { compileFilter } from "../../api/store/sql/compile-filter.ts";
import { quoteIdent } from "../../api/store/sql/quote-ident.ts";
import { createTableSql, encodeValue } from "../../api/store/sqlite/record-codec.ts";
import { sqliteDialect } from "../../api/store/sqlite/sqlite-dialect.ts";
import { FilterGenerator } from "./support/generate-filter.ts";
import { generateRecords } from "./support/generate-records.ts";
import { createRandom } from "./support/prng.ts";
import { TEST_CATALOGUE, testObject } from "./support/test-catalogue.ts";
import { NOW, OWNER_UIDS, THING_UIDS } from "./support/value-pools.ts";

const SEED = Number(process.env.FILTER_SEED ?? 20240501);
const FILTERS = Number(process.env.FILTER_COUNT ?? 10000);
const random = createRandom(SEED);
const db = new Database(":memory:");
afterAll(() => db.close());

const records = new Map<string, RecordValues[]>([
  ["Things", generateRecords(testObject("Things"), THING_UIDS, random)],
  ["Owners", generateRecords(testObject("Owners"), OWNER_UIDS, random)],
  ["Users", []],
]);

for (const [name, rows] of records) {
  const object = testObject(name);
  db.run(createTableSql(object.mapping, object));
  const insert = db.prepare(
    `INSERT INTO ${quoteIdent(object.mapping)} VALUES (${object.fields.map(() => "?").join(", ")})`,
  );
  for (const row of rows)
    insert.run(...object.fields.map((field) => encodeValue(field, row[field.name] ?? null)));
}

const context: EvaluationContext = {
  now: NOW,
  lookup: (objectName, uid) => records.get(objectName)?.find((record) => record.UID === uid) ?? null,
  select: (objectName) => records.get(objectName) ?? [],
};

function viaSql(object: ObjectDef, filter: ReturnType<typeof prepareFilter>): string[] {
  const sql = compileFilter(filter, sqliteDialect, {
    tableOf: (target) => target.mapping,
    alias: "r",
    now: NOW,
  });
  const query = `SELECT "r"."uid" AS uid FROM ${quoteIdent(object.mapping)} AS "r" ${sql.joins.join(" ")} WHERE ${sql.where}`;
  return db
    .query<{ uid: string }, typeof sql.params>(query)
    .all(...sql.params)
    .map((row) => row.uid)
    .sort();
}

function viaEvaluator(object: ObjectDef, filter: ReturnType<typeof prepareFilter>): string[] {
  const rows = records.get(object.name) ?? [];
  return rows
    .filter((record) => evaluateFilter(filter, record, context))
    .map((record) => String(record.UID))
    .sort();
}

test(`SQL and the evaluator select the same records (seed ${SEED}, ${FILTERS} filters)`, () => {
  console.log(`differential filter test: FILTER_SEED=${SEED}`);
  const generator = new FilterGenerator(random);
  const mismatches: string[] = [];
  let proper = 0;
  for (let i = 0; i < FILTERS; i++) {
    const object = testObject(random.chance(0.8) ? "Things" : "Owners");
    const text = generator.condition(object, 3);
    const filter = prepareFilter(text, object, TEST_CATALOGUE);
    const [sql, memory] = [viaSql(object, filter), viaEvaluator(object, filter)];
    if (sql.join() !== memory.join())
      mismatches.push(`#${i} ${object.name}: ${text}\n  sql: ${sql}\n  mem: ${memory}`);
    if (sql.length > 0 && sql.length < (records.get(object.name)?.length ?? 0)) proper++;
  }
  if (mismatches.length > 0) console.log(`seed ${SEED}\n${mismatches.slice(0, 10).join("\n")}`);
  expect(mismatches.length).toBe(0);
  // The filters must discriminate, not select all or nothing.
  expect(proper).toBeGreaterThan(FILTERS * 0.3);
});
