/**
 * The store factory's dispatcher half: a `StoreLocation` in, the dispatcher's
 * port out, built on the engine common/store/open-engine.ts opened (the API
 * builds its full store on the same).
 */
import { ConfigError } from "../errors.ts";
import { openEngine } from "../store/open-engine.ts";
import type { StoreLocation } from "../store/store-location.ts";
import type { DeliveryStore } from "./delivery-store.ts";
import { createPostgresDeliveryStore } from "./postgres/postgres-delivery-store.ts";
import { createSqliteDeliveryStore } from "./sqlite/sqlite-delivery-store.ts";

/** Why the dispatcher does not start on the experimental MongoDB engine, even with the opt-in. */
const MONGODB_DISPATCHER_REFUSAL =
  'MONGODB_URL: the experimental MongoDB engine has no delivery log yet, so the dispatcher cannot run on it (README, "Store engines")';

/**
 * Opens the dispatcher's delivery store at `location`, its schema brought up to date.
 * @throws ConfigError for a server that cannot be used, or the MongoDB engine, whose delivery log
 * the dispatcher cannot use yet (the dispatcher would fail every delivery).
 */
export async function openDeliveryStore(location: StoreLocation): Promise<DeliveryStore> {
  const engine = await openEngine(location);
  switch (engine.engine) {
    case "sqlite":
      return createSqliteDeliveryStore(engine);
    case "postgres":
      return createPostgresDeliveryStore(engine);
    case "mongodb":
      await engine.client.close();
      throw new ConfigError([MONGODB_DISPATCHER_REFUSAL]);
  }
}
