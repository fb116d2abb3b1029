/**
 * The store engine a benchmark runs the API on: `--engine sqlite` (the default, the embedded
 * file in the API's data directory) or `--engine postgres` (a private PostgreSQL cluster started
 * for the run, pinned to the API's core, its own database, reached by DATABASE_URL). Either way
 * the API is the real process (support.ts startApiProcess) and the data goes in through it.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { POSTGRES_SETTINGS, startPrivatePostgres } from "./compare/postgres.ts";
import { startApiProcess } from "./support.ts";

export type BenchEngine = "sqlite" | "postgres";

/** How each engine is named in results. */
export const ENGINE_LABEL: Record<BenchEngine, string> = { sqlite: "SQLite", postgres: "PostgreSQL" };

/**
 * Splits `argv` (after the script) into `--engine <name>` (or `--engine=<name>`) and the
 * positional arguments left in order.
 * @throws Error for an engine other than sqlite or postgres.
 */
export function parseBenchArgs(argv: readonly string[]): { engine: BenchEngine; positional: string[] } {
  const positional: string[] = [];
  let engine = "sqlite";
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--engine") engine = argv[++i] ?? "";
    else if (arg.startsWith("--engine=")) engine = arg.slice("--engine=".length);
    else positional.push(arg);
  }
  if (engine !== "sqlite" && engine !== "postgres")
    throw new Error(`--engine: sqlite or postgres, not '${engine}'`);
  return { engine, positional };
}

/**
 * The real API process on `engine`, pinned to `core` (with its database server, for PostgreSQL).
 * Beside support.ts's handle: `changeCount()` reads the change log's length from the store itself,
 * `storePids()` lists the database server's processes (none for SQLite, which runs in the API).
 */
export async function startApiOn(engine: BenchEngine, core: number) {
  if (engine === "sqlite") {
    const api = await startApiProcess(core);
    return {
      ...api,
      storePids: (): number[] => [],
      async changeCount(): Promise<number> {
        const db = new Database(join(api.dataDir, "store.sqlite"), { readonly: true });
        try {
          return db.query<{ n: number }, []>("SELECT count(*) AS n FROM change_log").get()?.n ?? 0;
        } finally {
          db.close();
        }
      },
    };
  }
  const postgres = await startPrivatePostgres(mkdtempSync(join(tmpdir(), "tds-bench-postgres-")), core);
  try {
    await postgres.createDatabase("bench");
    const api = await startApiProcess(core, { DATABASE_URL: postgres.url("bench") });
    const sql = postgres.client("bench");
    return {
      ...api,
      storePids: () => postgres.pids(),
      async changeCount(): Promise<number> {
        const [row] = await sql`SELECT count(*)::int AS n FROM change_log`;
        return (row as { n: number }).n;
      },
      async stop() {
        await sql.close();
        await api.stop();
        await postgres.stop();
      },
    };
  } catch (error) {
    await postgres.stop();
    throw error;
  }
}

/** One line for a results file: where the store was and how it was set. */
export function engineSetup(engine: BenchEngine): string {
  if (engine === "sqlite") return "SQLite in WAL mode, in the API process";
  const settings = Object.entries(POSTGRES_SETTINGS)
    .map(([name, value]) => `${name}=${value}`)
    .join(", ");
  return `PostgreSQL (Debian's, a private cluster started for the run, pinned to the API's core, reached by DATABASE_URL; settings other than defaults: ${settings}; the API's pool of 10 connections)`;
}
