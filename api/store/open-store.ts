/**
 * The store factory's API half: a `StoreLocation` in, the full store out, built
 * on the engine common/store/open-engine.ts opened (the dispatcher builds its
 * delivery-log port on the same). The API process, the admin tool and the
 * conformance suite open their store here.
 */
import { type OpenedEngine, openEngine } from "../../common/store/open-engine.ts";
import type { StoreLocation } from "../../common/store/store-location.ts";
import { createMongoStore } from "./mongodb/mongodb-store.ts";
import { createPostgresStore } from "./postgres/postgres-store.ts";
import { createSqliteStore } from "./sqlite/sqlite-store.ts";
import type { Store } from "./store.ts";

/**
 * Opens the store at `location`, its schema brought up to date.
 * @throws ConfigError for a server that cannot be used (common/store/open-engine.ts).
 */
export async function openStore(location: StoreLocation): Promise<Store> {
  return storeOn(await openEngine(location));
}

/** The full store of each engine, built on its opened connection. */
function storeOn(engine: OpenedEngine): Store {
  switch (engine.engine) {
    case "sqlite":
      return createSqliteStore(engine);
    case "postgres":
      return createPostgresStore(engine);
    case "mongodb":
      return createMongoStore(engine);
  }
}
