/**
 * Which store engine a process opens, and where: configuration in, a
 * `StoreLocation` out. Both processes (and the admin tool) read it from the
 * same settings, so they always open the same store.
 */
import { join } from "node:path";
import { ConfigError } from "../errors.ts";

/** An engine a store can be kept in (`sqlite`, `postgres`, `mongodb`) and where its data is. */
export type StoreLocation =
  | { engine: "sqlite" /** The store file. */; path: string }
  | { engine: "postgres" /** `postgres://` or `postgresql://` connection URL. */; url: string }
  | { engine: "mongodb" /** `mongodb://` or `mongodb+srv://` replica-set URL. */; url: string };

/** The settings (common/config-fields.ts) that choose the engine. */
export interface StoreSettings {
  DATA_DIR: string;
  DATABASE_URL?: string | undefined;
  MONGODB_URL?: string | undefined;
  /** The experimental engine allowed to start (`mongodb`), if any. */
  STORE_EXPERIMENTAL?: "mongodb" | undefined;
}

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
  if (settings.DATABASE_URL) return { engine: "postgres", url: settings.DATABASE_URL };
  if (settings.MONGODB_URL) {
    if (settings.STORE_EXPERIMENTAL !== "mongodb") throw new ConfigError([MONGODB_EXPERIMENTAL_REFUSAL]);
    return { engine: "mongodb", url: settings.MONGODB_URL };
  }
  return { engine: "sqlite", path: join(settings.DATA_DIR, SQLITE_FILE) };
}
