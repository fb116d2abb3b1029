/**
 * The store factory's dispatcher half: a `StoreLocation` in, the dispatcher's
 * port out, built on the engine common/store/open-engine.ts opened (the API
 * builds its full store on the same).
 */
import { openEngine } from "../store/open-engine.ts";
import type { StoreLocation } from "../store/store-location.ts";
import type { DeliveryStore } from "./delivery-store.ts";
import { createMongoDeliveryStore } from "./mongodb/mongodb-delivery-store.ts";
import { createPostgresDeliveryStore } from "./postgres/postgres-delivery-store.ts";
import { createSqliteDeliveryStore } from "./sqlite/sqlite-delivery-store.ts";

/**
 * Opens the dispatcher's delivery store at `location`, its schema brought up to date (on MongoDB,
 * experimental, only with the opt-in store-location.ts checks).
 * @throws ConfigError for a server that cannot be used.
 */
export async function openDeliveryStore(location: StoreLocation): Promise<DeliveryStore> {
  const engine = await openEngine(location);
  switch (engine.engine) {
    case "sqlite":
      return createSqliteDeliveryStore(engine);
    case "postgres":
      return createPostgresDeliveryStore(engine);
    case "mongodb":
      return createMongoDeliveryStore(engine);
  }
}
