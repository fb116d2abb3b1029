/**
 * Plain SQL on a test's store, whatever its engine, for tests that look under
 * the port (a secret sealed at rest, rows a retention step left, a row written
 * behind the API's back). Statements use PostgreSQL's numbered placeholders
 * ($1, $2, …), which SQLite reads as ?1, ?2; tables both engines share
 * (config_variables, deliveries, delivery_attempts) read alike. A MongoDB
 * store has no SQL: the tests that look under the port this way skip on it
 * (`SQL_UNDER_PORT`), and say so in their names' skip.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { SQL } from "bun";
import { type StoreEnv, testEngine } from "./test-store.ts";

/** Whether the run's store can be read with SQL (not on MongoDB): tests that do skip otherwise. */
export const SQL_UNDER_PORT = testEngine() !== "mongodb";

type Param = string | number | boolean | null;

/** Runs `statement` on the store `env` locates; resolves to its rows. */
export async function storeSql<T>(env: StoreEnv, statement: string, params: Param[] = []): Promise<T[]> {
  if (env.MONGODB_URL)
    throw new Error("storeSql: a MongoDB store has no SQL (skip the test: SQL_UNDER_PORT)");
  if (env.DATABASE_URL) {
    const sql = new SQL({ url: env.DATABASE_URL, max: 1 });
    try {
      return (await sql.unsafe(statement, params)) as T[];
    } finally {
      await sql.close();
    }
  }
  const db = new Database(join(env.DATA_DIR, "store.sqlite"));
  try {
    return db.query(statement.replace(/\$(\d+)/g, "?$1")).all(...params) as T[];
  } finally {
    db.close();
  }
}
