/**
 * PostgreSQL for the tests that need one: a database of its own per caller
 * (a test file), on the server `TEST_DATABASE_URL` names or else on one
 * private cluster (scripts/private-postgres.ts) started at the first request
 * and shared by the whole run. A run that asks for no database starts none.
 * The preload (preload.ts) stops the cluster after the last test file, and
 * its exit handler kills it if the run ends otherwise: no server process and
 * no temporary folder outlives the run.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { migrate } from "../../common/store/postgres/migrate.ts";
import { type PrivatePostgres, startPrivatePostgres } from "../../scripts/private-postgres.ts";

/**
 * Test data is thrown away: nothing waits for a flush. The default locale is C.UTF-8, not C, as
 * on most servers, whose ILIKE folds non-ASCII letters: a text column missing `COLLATE "C"` shows
 * in the EQL differential test instead of passing here and failing in production.
 */
const TEST_SETTINGS = { fsync: "off", synchronous_commit: "off", full_page_writes: "off" };
const TEST_LOCALE = "C.UTF-8";

/** A database of one test file's own, dropped by `drop`. */
export interface TestDatabase {
  /** Its name and URL (for code under test that takes a URL). */
  name: string;
  url: string;
  /** A client of the database (a small pool), closed by `drop`. */
  sql: SQL;
  /** Closes the client and drops the database. */
  drop(): Promise<void>;
}

let cluster: Promise<PrivatePostgres> | null = null;
let started: PrivatePostgres | null = null;
let created = 0;
/** The run's template database, migrated once (see `createTestDatabase`'s `migrated`). */
let template: Promise<string> | null = null;

/** The server's URL for `database`: TEST_DATABASE_URL's server, or the private cluster (started once). */
async function serverUrl(database: string): Promise<string> {
  const given = process.env.TEST_DATABASE_URL;
  if (given) {
    const url = new URL(given);
    url.pathname = `/${database}`;
    return url.toString();
  }
  cluster ??= startPrivatePostgres({
    dir: mkdtempSync(join(tmpdir(), "tds-test-postgres-")),
    settings: TEST_SETTINGS,
    locale: TEST_LOCALE,
  }).then((postgres) => {
    started = postgres;
    return postgres;
  });
  return (await cluster).url(database);
}

/** What a test database starts as. */
export interface TestDatabaseOptions {
  /**
   * Copied from a template database the run migrated once (CREATE DATABASE … TEMPLATE), so it
   * opens as a store with every migration applied, without running them again: a copy takes tens
   * of milliseconds where migrating takes hundreds, which adds up over the suite's hundreds of
   * apps. Default false: an empty database, for tests of the migrations themselves.
   */
  migrated?: boolean;
}

/** Runs `statement` on the server's maintenance database. */
async function onServer(statement: string): Promise<void> {
  const admin = new SQL({ url: await serverUrl("postgres"), max: 1 });
  try {
    await admin.unsafe(statement);
  } finally {
    await admin.close();
  }
}

/** The run's migrated template: created and migrated at the first request, then only copied. */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const name = `tds_template_${process.pid}`;
    await onServer(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await onServer(`CREATE DATABASE "${name}" TEMPLATE template0 ENCODING 'UTF8'`);
    // Closed before any copy: PostgreSQL copies a template only while no session is connected to it.
    const sql = new SQL({ url: await serverUrl(name), max: 1 });
    try {
      await migrate(sql);
    } finally {
      await sql.close();
    }
    return name;
  })();
  return template;
}

/**
 * Creates a fresh database named after `label` (a test file's name, say) and the process, so test
 * files and concurrent runs on one server never share one.
 */
export async function createTestDatabase(
  label: string,
  options: TestDatabaseOptions = {},
): Promise<TestDatabase> {
  const safe = label.toLowerCase().replace(/[^a-z0-9]+/g, "_");
  const name = `tds_${process.pid}_${++created}_${safe}`.slice(0, 63);
  const from = options.migrated ? await migratedTemplate() : "template0";
  await onServer(`CREATE DATABASE "${name}" TEMPLATE "${from}" ENCODING 'UTF8'`);
  const url = await serverUrl(name);
  const sql = new SQL({ url, max: 4 });
  return {
    name,
    url,
    sql,
    async drop() {
      await sql.close();
      await onServer(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}

/** Stops the private cluster if this run started one (the preload's last hook). */
export async function stopTestPostgres(): Promise<void> {
  // A cluster that failed to start removed its folder itself; the failing test reported why.
  const postgres = await cluster?.catch(() => null);
  // On a server of TEST_DATABASE_URL's the template would outlive the run; the private cluster goes whole.
  const made = await template?.catch(() => null);
  template = null;
  if (made && !postgres && process.env.TEST_DATABASE_URL)
    await onServer(`DROP DATABASE IF EXISTS "${made}" WITH (FORCE)`).catch(() => undefined);
  cluster = null;
  started = null;
  await postgres?.stop();
}

/** Kills the private cluster at once, synchronously (the preload's exit handler). */
export function killTestPostgres(): void {
  started?.killNow();
  started = null;
}
