/**
 * The store engine a test run uses, chosen by `TEST_STORE` (`sqlite`, the
 * default, `postgres`, or `mongodb` where MONGODB_TEST_URL names a replica
 * set; scripts/check.ts runs the suite on each it can), and a fresh store of
 * it as the settings a process reads: DATA_DIR always (the embedded engine's
 * folder, and where else a process keeps files), DATABASE_URL for PostgreSQL
 * (a database of the test's own on the run's server), MONGODB_URL with the
 * opt-in for MongoDB (a database of the test's own on MONGODB_TEST_URL's
 * replica set).
 */
import { createTestMongoDatabase } from "./mongodb-test-database.ts";
import { MONGODB_SKIPPED, mongodbTestUrl } from "./mongodb-test-run.ts";
import { createTestDatabase } from "./private-postgres.ts";

/** The engines a run can choose. */
const TEST_ENGINES = ["sqlite", "postgres", "mongodb"] as const;
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
  MONGODB_URL?: string;
  STORE_EXPERIMENTAL?: "mongodb";
}

/** A fresh store's settings, and how to drop it once every process on it is gone. */
export interface FreshStore {
  env: StoreEnv;
  drop(): Promise<void>;
}

/**
 * A fresh store of the run's engine in `dataDir` (SQLite: the folder's file, removed by the caller
 * with the folder) or, on a server engine, a database of its own: on PostgreSQL `migrated` copies
 * the run's migrated template (fast; for tests of the app), else the database is empty and the
 * first process to open it migrates it (for tests of processes starting); a MongoDB database is
 * always empty (the first process to open it creates the layout). `engine` overrides the run's (a
 * test of several processes sharing one store that only PostgreSQL is meant for).
 * @throws Error on MongoDB when MONGODB_TEST_URL is unset (no server can be started here).
 */
export async function freshTestStore(
  dataDir: string,
  label: string,
  migrated = true,
  engine: TestEngine = testEngine(),
): Promise<FreshStore> {
  if (engine === "sqlite") return { env: { DATA_DIR: dataDir }, drop: async () => {} };
  if (engine === "mongodb") {
    const server = mongodbTestUrl();
    if (!server) throw new Error(`TEST_STORE=mongodb: ${MONGODB_SKIPPED}`);
    const database = createTestMongoDatabase(server, label);
    return {
      env: { DATA_DIR: dataDir, MONGODB_URL: database.url, STORE_EXPERIMENTAL: "mongodb" },
      drop: () => database.drop(),
    };
  }
  const database = await createTestDatabase(label, { migrated });
  return { env: { DATA_DIR: dataDir, DATABASE_URL: database.url }, drop: () => database.drop() };
}

/** The settings of `env` that locate a store, as a second app or process on the same store is given them. */
export function storeEnvOf(env: Readonly<Record<string, string>>, dataDir: string): StoreEnv {
  return {
    DATA_DIR: env.DATA_DIR ?? dataDir,
    ...(env.DATABASE_URL ? { DATABASE_URL: env.DATABASE_URL } : {}),
    ...(env.MONGODB_URL ? { MONGODB_URL: env.MONGODB_URL, STORE_EXPERIMENTAL: "mongodb" as const } : {}),
  };
}
