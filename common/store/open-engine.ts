/**
 * The store factory's shared half: a `StoreLocation` in, the engine's
 * connection out, its schema brought up to date. Every process opens its store
 * through here: the API and the admin tool build the full store on the
 * connection (api/store/open-store.ts), the dispatcher its delivery-log port
 * (common/delivery-log/open-delivery-store.ts). The engine is chosen here and
 * nowhere else.
 */
import { ConfigError } from "../errors.ts";
import { openPostgresEngine, type PostgresEngine } from "./postgres/postgres-engine.ts";
import { openSqliteEngine, type SqliteEngine } from "./sqlite/sqlite-engine.ts";
import type { StoreLocation } from "./store-location.ts";

/** An opened engine, one member per engine (told apart by `engine`). MongoDB joins here after PostgreSQL. */
export type OpenedEngine = SqliteEngine | PostgresEngine;

/**
 * Opens the engine at `location` and brings its schema up to date (the first process to open a
 * new store creates it; the others find it done).
 * @throws ConfigError for an engine that is not available yet (MongoDB), or a PostgreSQL server that
 * cannot be used (postgres/postgres-engine.ts).
 */
export async function openEngine(location: StoreLocation): Promise<OpenedEngine> {
  switch (location.engine) {
    case "sqlite":
      return openSqliteEngine(location.path);
    case "postgres":
      return openPostgresEngine(location.url);
    case "mongodb":
      throw new ConfigError([
        "MONGODB_URL: the MongoDB engine is not available yet (it will be opt-in); unset it to use the embedded store",
      ]);
  }
}
