/**
 * The store factory's shared half: a `StoreLocation` in, the engine's
 * connection out, its schema brought up to date. Every process opens its store
 * through here: the API and the admin tool build the full store on the
 * connection (api/store/open-store.ts), the dispatcher its delivery-log port
 * (common/delivery-log/open-delivery-store.ts). The engine is chosen here and
 * nowhere else.
 */
import { type MongoEngine, openMongoEngine } from "./mongodb/mongodb-engine.ts";
import { openPostgresEngine, type PostgresEngine } from "./postgres/postgres-engine.ts";
import { openSqliteEngine, type SqliteEngine } from "./sqlite/sqlite-engine.ts";
import type { StoreLocation } from "./store-location.ts";

/** An opened engine, one member per engine (told apart by `engine`). */
export type OpenedEngine = SqliteEngine | PostgresEngine | MongoEngine;

/**
 * Opens the engine at `location` and brings its schema up to date (the first process to open a
 * new store creates it; the others find it done).
 * @throws ConfigError for a PostgreSQL or MongoDB server that cannot be used
 * (postgres/postgres-engine.ts, mongodb/mongodb-engine.ts).
 */
export async function openEngine(location: StoreLocation): Promise<OpenedEngine> {
  switch (location.engine) {
    case "sqlite":
      return openSqliteEngine(location.path);
    case "postgres":
      return openPostgresEngine(location.url, {
        maxConnections: location.poolSize,
        statementTimeoutMs: location.statementTimeoutMs,
      });
    case "mongodb":
      // Reached only with STORE_EXPERIMENTAL=mongodb (store-location.ts refuses MONGODB_URL alone).
      return openMongoEngine(location.url);
  }
}
