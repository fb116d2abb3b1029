/**
 * The store engines the conformance suite runs on, chosen by `TEST_STORE`
 * (default `sqlite`). An engine plugs in with one entry here: where a fresh,
 * empty store of it is (a `StoreLocation`) and how to drop it. The store, a
 * second handle on the same data and the dispatcher's delivery-log port are
 * opened from that location through the store factory, as the processes open
 * them. An unknown name fails loudly, never silently falls back to another engine. An engine
 * whose server this run cannot reach (MongoDB without MONGODB_TEST_URL) is named with the reason
 * it is skipped, and the suite says so instead of running.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../api/store/open-store.ts";
import type { Store } from "../../api/store/store.ts";
import type { DeliveryStore } from "../../common/delivery-log/delivery-store.ts";
import { openDeliveryStore } from "../../common/delivery-log/open-delivery-store.ts";
import { type StoreLocation, storeLocationOf } from "../../common/store/store-location.ts";
import { createTestMongoDatabase } from "../support/mongodb-test-database.ts";
import { MONGODB_SKIPPED, mongodbTestUrl } from "../support/mongodb-test-run.ts";
import { createTestDatabase } from "../support/private-postgres.ts";

/** One fresh store of an engine, and what the suite needs around it. */
export interface OpenedEngine {
  store: Store;
  /** Another handle on the same data, as another process would open it. */
  reopen(): Promise<Store>;
  /** The dispatcher's port over the same data: it writes the delivery attempts the API reads. */
  openDispatcherLog(): Promise<DeliveryStore>;
  /** Deletes the data (every handle is closed by then). */
  cleanup(): Promise<void>;
}

export type EngineFactory = () => Promise<OpenedEngine>;

/** Where a fresh, empty store of an engine is, and how to drop it once every handle is closed. */
interface FreshData {
  location: StoreLocation;
  drop(): Promise<void>;
}

/** Engines that run only when a server is given, and why one is skipped (null: it runs). */
const SKIPPED: Record<string, () => string | null> = {
  mongodb: () => (mongodbTestUrl() ? null : MONGODB_SKIPPED),
};

const ENGINES: Record<string, () => Promise<FreshData>> = {
  async sqlite() {
    const dir = mkdtempSync(join(tmpdir(), "tds-conformance-"));
    // As the processes choose it: DATA_DIR set, no engine URL.
    return {
      location: storeLocationOf({ DATA_DIR: dir }),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
  async postgres() {
    // A database per test on the run's private cluster (or TEST_DATABASE_URL's server), as DATABASE_URL names it.
    const database = await createTestDatabase("conformance", { migrated: true });
    return {
      location: storeLocationOf({ DATA_DIR: "unused", DATABASE_URL: database.url }),
      drop: () => database.drop(),
    };
  },
  async mongodb() {
    // A database per test on MONGODB_TEST_URL's replica set, opened as the processes open it: opted in.
    const server = mongodbTestUrl();
    if (!server) throw new Error(`store conformance (mongodb): ${MONGODB_SKIPPED}`);
    const database = createTestMongoDatabase(server, "conformance");
    return {
      location: storeLocationOf({
        DATA_DIR: "unused",
        MONGODB_URL: database.url,
        STORE_EXPERIMENTAL: "mongodb",
      }),
      drop: () => database.drop(),
    };
  },
};

/** Opens a fresh store of an engine through the store factory, with what the suite needs around it. */
const openedFrom =
  (fresh: () => Promise<FreshData>): EngineFactory =>
  async () => {
    const { location, drop } = await fresh();
    return {
      store: await openStore(location),
      reopen: () => openStore(location),
      openDispatcherLog: () => openDeliveryStore(location),
      cleanup: drop,
    };
  };

/**
 * The engine `TEST_STORE` names (sqlite when unset), and why it is skipped in this run (null when
 * it runs). @throws Error naming the engines there are, for any other name.
 */
export function chosenEngine(name = process.env.TEST_STORE || "sqlite"): {
  name: string;
  open: EngineFactory;
  skipped: string | null;
} {
  const fresh = ENGINES[name];
  if (!fresh)
    throw new Error(
      `TEST_STORE=${name}: no such store engine in test/store/engines.ts (${Object.keys(ENGINES).join(", ")})`,
    );
  return { name, open: openedFrom(fresh), skipped: SKIPPED[name]?.() ?? null };
}
