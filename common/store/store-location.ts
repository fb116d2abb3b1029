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
}

/** The embedded store's file name under DATA_DIR. */
const SQLITE_FILE = "store.sqlite";

/**
 * The engine the settings choose: PostgreSQL when DATABASE_URL is set, MongoDB when MONGODB_URL
 * is, else the embedded SQLite file `DATA_DIR/store.sqlite`.
 * @throws ConfigError when both URLs are set (the choice would be a guess).
 */
export function storeLocationOf(settings: Readonly<StoreSettings>): StoreLocation {
  if (settings.DATABASE_URL && settings.MONGODB_URL)
    throw new ConfigError([
      "DATABASE_URL, MONGODB_URL: each chooses a store engine; set one of them, not both",
    ]);
  if (settings.DATABASE_URL) return { engine: "postgres", url: settings.DATABASE_URL };
  if (settings.MONGODB_URL) return { engine: "mongodb", url: settings.MONGODB_URL };
  return { engine: "sqlite", path: join(settings.DATA_DIR, SQLITE_FILE) };
}
