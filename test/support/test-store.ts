/**
 * The store engine a test run uses, chosen by `TEST_STORE` (`sqlite`, the
 * default, or `postgres`; scripts/check.ts runs the suite on each), and a fresh
 * store of it as the settings a process reads: DATA_DIR always (the embedded
 * engine's folder, and where else a process keeps files), DATABASE_URL for
 * PostgreSQL (a database of the test's own on the run's server).
 */
import { createTestDatabase } from "./private-postgres.ts";

/** The engines a run can choose. */
const TEST_ENGINES = ["sqlite", "postgres"] as const;
export type TestEngine = (typeof TEST_ENGINES)[number];

/** The engine of this run. @throws Error for a TEST_STORE naming no engine (never a silent fallback). */
export function testEngine(): TestEngine {
  const name = process.env.TEST_STORE || "sqlite";
  if (!(TEST_ENGINES as readonly string[]).includes(name))
    throw new Error(`TEST_STORE=${name}: no such store engine (${TEST_ENGINES.join(", ")})`);
  return name as TestEngine;
}

/** The settings that locate a store (common/store/store-location.ts reads them). */
export interface StoreEnv {
  DATA_DIR: string;
  DATABASE_URL?: string;
}

/** A fresh store's settings, and how to drop it once every process on it is gone. */
export interface FreshStore {
  env: StoreEnv;
  drop(): Promise<void>;
}

/**
 * A fresh store of the run's engine in `dataDir` (SQLite: the folder's file, removed by the caller
 * with the folder) or, on PostgreSQL, a database of its own: `migrated` copies the run's migrated
 * template (fast; for tests of the app), else the database is empty and the first process to open
 * it migrates it (for tests of processes starting). `engine` overrides the run's (a test of several
 * processes sharing one store that only PostgreSQL is meant for).
 */
export async function freshTestStore(
  dataDir: string,
  label: string,
  migrated = true,
  engine: TestEngine = testEngine(),
): Promise<FreshStore> {
  if (engine === "sqlite") return { env: { DATA_DIR: dataDir }, drop: async () => {} };
  const database = await createTestDatabase(label, { migrated });
  return { env: { DATA_DIR: dataDir, DATABASE_URL: database.url }, drop: () => database.drop() };
}
