/**
 * The PostgreSQL engine opened (common/store/open-engine.ts picks it): a pool
 * of Bun's SQL client on the server DATABASE_URL names, the server checked
 * (reachable, a supported version) and the schema migrated, so every process
 * (API, admin tool, dispatcher) can be the first to open a fresh database.
 * What keeps a process from starting is a ConfigError of one line naming
 * DATABASE_URL, never a driver's stack trace.
 */
import { SQL } from "bun";
import { ConfigError } from "../../errors.ts";
import { DEFAULT_POOL_SIZE } from "../store-location.ts";
import { migrate } from "./migrate.ts";

/**
 * The oldest major version a process starts on: the oldest the PostgreSQL project still supports.
 * The engine's SQL uses nothing newer (no MERGE, NULLS NOT DISTINCT or SQL/JSON constructors); the
 * tests run on the machine's server (15).
 */
export const OLDEST_SUPPORTED_MAJOR = 14;

/**
 * Seconds a pooled connection lives before the client replaces it (a connection in use is replaced
 * once released). The server keeps the plans of a connection's prepared statements until it ends:
 * a plan made while a table was small (a sequential scan) would otherwise outlive the table's growth
 * until ANALYZE, and the statements a connection kept (up to the client's 1,024) would never be
 * given back. Reconnecting ten connections every 30 s costs next to nothing.
 */
const CONNECTION_LIFETIME_S = 30;

/** The PostgreSQL engine, opened: its database migrated, a pool of connections on it. */
export interface PostgresEngine {
  readonly engine: "postgres";
  readonly url: string;
  /** The pool the migrations ran on; whoever builds on the engine closes it. */
  readonly sql: SQL;
  /** Connections in the pool at most. */
  readonly poolSize: number;
  /** The statement_timeout of every connection of the pool, ms; 0: none. */
  readonly statementTimeoutMs: number;
}

export interface PostgresEngineOptions {
  /** Connections in the pool (default DEFAULT_POOL_SIZE). */
  maxConnections?: number | undefined;
  /**
   * The server's statement_timeout on every connection of the pool, ms (STORE_STATEMENT_TIMEOUT_MS;
   * default 0: none). Sent as a startup parameter, so it holds on every connection the client
   * opens, replacements included. What may legitimately run longer lifts it for its own
   * transaction (`SET LOCAL statement_timeout = 0`): the migrations, a catalogue change's index build.
   */
  statementTimeoutMs?: number | undefined;
}

/** The URL without its password, for messages. */
function shown(url: URL): string {
  return `${url.protocol}//${url.username ? `${url.username}@` : ""}${url.host}${url.pathname}`;
}

/** @throws ConfigError unless `url` is a postgres:// or postgresql:// URL naming a host. */
function parseUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(["DATABASE_URL: not a URL (expected postgres://user:password@host:5432/database)"]);
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:")
    throw new ConfigError([`DATABASE_URL: ${parsed.protocol} is not postgres:// or postgresql://`]);
  if (!parsed.hostname) throw new ConfigError(["DATABASE_URL: names no host"]);
  return parsed;
}

/** The first line of a driver's error, with its SQLSTATE or system code when it has one. */
function reasonOf(error: unknown): string {
  const coded = error as { errno?: unknown; code?: unknown; message?: unknown } | null;
  const message = String(coded?.message ?? error).split("\n")[0] ?? "";
  const code =
    typeof coded?.errno === "string" ? coded.errno : typeof coded?.code === "string" ? coded.code : "";
  return code && !message.includes(code) ? `${message} (${code})` : message;
}

/** The server's major version (server_version_num is 140005 for 14.5). */
async function serverMajor(sql: SQL): Promise<number> {
  const [row] = (await sql.unsafe("SELECT current_setting('server_version_num')::int AS v")) as {
    v: number;
  }[];
  return Math.floor((row?.v ?? 0) / 10_000);
}

/**
 * Opens a pool on the database `url` names, checks the server and brings the schema up to date
 * (safe when several processes start at once: migrate.ts).
 * @throws ConfigError (one line naming DATABASE_URL) for a malformed URL, a server that cannot be
 * reached or refuses the login, one older than OLDEST_SUPPORTED_MAJOR, or a migration that fails;
 * nothing is left open then.
 */
export async function openPostgresEngine(
  url: string,
  options: PostgresEngineOptions = {},
): Promise<PostgresEngine> {
  const parsed = parseUrl(url);
  const statementTimeoutMs = options.statementTimeoutMs ?? 0;
  const poolSize = options.maxConnections ?? DEFAULT_POOL_SIZE;
  const sql = new SQL({
    url,
    max: poolSize,
    maxLifetime: CONNECTION_LIFETIME_S,
    ...(statementTimeoutMs > 0 ? { connection: { statement_timeout: statementTimeoutMs } } : {}),
  });
  try {
    let major: number;
    try {
      major = await serverMajor(sql);
    } catch (error) {
      throw new ConfigError([`DATABASE_URL: cannot use ${shown(parsed)}: ${reasonOf(error)}`]);
    }
    if (major < OLDEST_SUPPORTED_MAJOR)
      throw new ConfigError([
        `DATABASE_URL: ${shown(parsed)} runs PostgreSQL ${major}; the oldest supported is ${OLDEST_SUPPORTED_MAJOR}`,
      ]);
    try {
      await migrate(sql);
    } catch (error) {
      throw new ConfigError([`DATABASE_URL: migrating ${shown(parsed)} failed: ${reasonOf(error)}`]);
    }
    return { engine: "postgres", url, sql, poolSize, statementTimeoutMs };
  } catch (error) {
    await sql.close().catch(() => undefined);
    throw error;
  }
}
