/**
 * Which store engine a process opens, and where: configuration in, a
 * `StoreLocation` out. Both processes (and the admin tool) read it from the
 * same settings, so they always open the same store.
 */
import { statSync } from "node:fs";
import { join, resolve } from "node:path";
import { BadRequestError, ConfigError } from "../errors.ts";

/** An engine a store can be kept in (`sqlite`, `postgres`, `mongodb`) and where its data is. */
export type StoreLocation =
  | { engine: "sqlite" /** The store file. */; path: string }
  | {
      engine: "postgres";
      /** `postgres://` or `postgresql://` connection URL. */
      url: string;
      /** Connections the process keeps to the server at most (DATABASE_POOL_SIZE); unset: the engine's default. */
      poolSize?: number | undefined;
      /** The statement time limit of its connections, ms (STORE_STATEMENT_TIMEOUT_MS); unset or 0: none. */
      statementTimeoutMs?: number | undefined;
    }
  | { engine: "mongodb" /** `mongodb://` or `mongodb+srv://` replica-set URL. */; url: string };

/** The settings (common/config-fields.ts) that choose the engine. */
export interface StoreSettings {
  DATA_DIR: string;
  DATABASE_URL?: string | undefined;
  DATABASE_POOL_SIZE?: number | undefined;
  /** The API's statement time limit on PostgreSQL, ms; the dispatcher and the admin tool set none. */
  STORE_STATEMENT_TIMEOUT_MS?: number | undefined;
  MONGODB_URL?: string | undefined;
  /** The experimental engine allowed to start (`mongodb`), if any. */
  STORE_EXPERIMENTAL?: "mongodb" | undefined;
}

/** Connections a process keeps to PostgreSQL when DATABASE_POOL_SIZE does not say. */
export const DEFAULT_POOL_SIZE = 10;

/** The embedded store's file name under DATA_DIR. */
const SQLITE_FILE = "store.sqlite";

/**
 * Why MONGODB_URL alone does not start a process: one line, naming the opt-in and where to read
 * more. The engine's driver-backed parts have never run against a real replica set here.
 */
export const MONGODB_EXPERIMENTAL_REFUSAL =
  'MONGODB_URL: the MongoDB engine is experimental and untested against a real server; set STORE_EXPERIMENTAL=mongodb to start on it anyway (README, "Store engines")';

/**
 * The engine the settings choose: PostgreSQL when DATABASE_URL is set, MongoDB when MONGODB_URL
 * is (and STORE_EXPERIMENTAL=mongodb allows it), else the embedded SQLite file
 * `DATA_DIR/store.sqlite`.
 * @throws ConfigError when both URLs are set (the choice would be a guess), or MONGODB_URL is set
 * without STORE_EXPERIMENTAL=mongodb.
 */
export function storeLocationOf(settings: Readonly<StoreSettings>): StoreLocation {
  if (settings.DATABASE_URL && settings.MONGODB_URL)
    throw new ConfigError([
      "DATABASE_URL, MONGODB_URL: each chooses a store engine; set one of them, not both",
    ]);
  if (settings.DATABASE_URL)
    return {
      engine: "postgres",
      url: settings.DATABASE_URL,
      poolSize: settings.DATABASE_POOL_SIZE,
      statementTimeoutMs: settings.STORE_STATEMENT_TIMEOUT_MS,
    };
  if (settings.MONGODB_URL) {
    if (settings.STORE_EXPERIMENTAL !== "mongodb") throw new ConfigError([MONGODB_EXPERIMENTAL_REFUSAL]);
    return { engine: "mongodb", url: settings.MONGODB_URL };
  }
  return { engine: "sqlite", path: join(settings.DATA_DIR, SQLITE_FILE) };
}

/** A URL's scheme at the start of a store's name (`postgres://`), lower-cased; null for a path. */
const schemeOf = (name: string) => /^([a-z][a-z0-9+.-]*):\/\//i.exec(name)?.[1]?.toLowerCase() ?? null;

/**
 * The store a command line names (`copy-store --from`/`--to`): a `postgres://` or `postgresql://`
 * URL, a `mongodb://` or `mongodb+srv://` URL, else the path of a SQLite store file (a directory,
 * such as a DATA_DIR, names the store file in it).
 * @throws BadRequestError for a URL of another scheme, or an empty name.
 */
export function storeLocationNamed(name: string): StoreLocation {
  const scheme = schemeOf(name);
  if (scheme === "postgres" || scheme === "postgresql") return { engine: "postgres", url: name };
  if (scheme === "mongodb" || scheme === "mongodb+srv") return { engine: "mongodb", url: name };
  if (scheme !== null)
    throw new BadRequestError(
      `${scheme}:// names no store engine: give a postgres://, postgresql:// or mongodb:// URL, or a SQLite file's path`,
    );
  if (name.trim() === "") throw new BadRequestError("a store's location is empty");
  const path = resolve(name);
  const isFolder = statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
  return { engine: "sqlite", path: isFolder ? join(path, SQLITE_FILE) : path };
}

/** A store's location for messages: the engine and the file or URL, a URL's password left out. */
export function describeStoreLocation(location: StoreLocation): string {
  if (location.engine === "sqlite") return `sqlite ${location.path}`;
  try {
    const url = new URL(location.url);
    if (url.password) url.password = "***";
    return `${location.engine} ${url.toString()}`;
  } catch {
    return location.engine;
  }
}
