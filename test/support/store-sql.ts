/**
 * Plain SQL on a test's store, whatever its engine, for tests that look under
 * the port (a secret sealed at rest, rows a retention step left, a row written
 * behind the API's back). Statements use PostgreSQL's numbered placeholders
 * ($1, $2, …), which SQLite reads as ?1, ?2; tables both engines share
 * (config_variables, deliveries, delivery_attempts) read alike.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { SQL } from "bun";
import type { StoreEnv } from "./test-store.ts";

type Param = string | number | boolean | null;

/** Runs `statement` on the store `env` locates; resolves to its rows. */
export async function storeSql<T>(env: StoreEnv, statement: string, params: Param[] = []): Promise<T[]> {
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
