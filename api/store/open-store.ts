/**
 * The store factory's API half: a `StoreLocation` in, the full store out, built
 * on the engine common/store/open-engine.ts opened (the dispatcher builds its
 * delivery-log port on the same). The API process, the admin tool and the
 * conformance suite open their store here.
 */
import { ConfigError } from "../../common/errors.ts";
import { type OpenedEngine, openEngine } from "../../common/store/open-engine.ts";
import type { StoreLocation } from "../../common/store/store-location.ts";
import { createMongoStore } from "./mongodb/mongodb-store.ts";
import { postgresStoreOn } from "./postgres/postgres-store.ts";
import { SQLITE_FEED_PARTITIONS } from "./sqlite/feed-cursor.ts";
import { createSqliteStore } from "./sqlite/sqlite-store.ts";
import type { Store } from "./store.ts";

/** What the store is opened for, beyond where it is. */
export interface StoreOptions {
  /**
   * The change log's partitions (FEED_PARTITIONS): those a new store gets, and those an existing
   * store must have. Unset: the engine's default for a new store (PostgreSQL 16, SQLite 1),
   * whatever an existing one has.
   */
  feedPartitions?: number | undefined;
}

/**
 * Opens the store at `location`, its schema brought up to date.
 * @throws ConfigError for a server that cannot be used (common/store/open-engine.ts), or partitions
 * the store cannot have (SQLite keeps one; a PostgreSQL store keeps those it was created with).
 */
export async function openStore(location: StoreLocation, options: StoreOptions = {}): Promise<Store> {
  const { feedPartitions } = options;
  if (
    location.engine === "sqlite" &&
    feedPartitions !== undefined &&
    feedPartitions !== SQLITE_FEED_PARTITIONS
  )
    throw new ConfigError([
      `FEED_PARTITIONS: the embedded SQLite store keeps one change-feed partition (one machine), not ${feedPartitions}; unset it or set 1`,
    ]);
  return storeOn(await openEngine(location), options);
}

/** The full store of each engine, built on its opened connection. */
async function storeOn(engine: OpenedEngine, options: StoreOptions): Promise<Store> {
  switch (engine.engine) {
    case "sqlite":
      return createSqliteStore(engine);
    case "postgres":
      return postgresStoreOn(engine, options);
    case "mongodb":
      return createMongoStore(engine);
  }
}
