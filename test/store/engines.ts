/**
 * The store engines the conformance suite runs on, chosen by `TEST_STORE`
 * (default `sqlite`). An engine plugs in with one entry here: how to open a
 * fresh, empty store, a second handle on the same data, and the dispatcher's
 * delivery-log port over it. An unknown name fails loudly, never silently
 * falls back to another engine.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPostgresStore } from "../../api/store/postgres/postgres-store.ts";
import { openSqliteStore } from "../../api/store/sqlite/sqlite-store.ts";
import type { Store } from "../../api/store/store.ts";
import type { DeliveryStore } from "../../dispatcher/delivery-store.ts";
import { openPostgresDeliveryStore } from "../../dispatcher/store/postgres/postgres-delivery-store.ts";
import { openSqliteDeliveryStore } from "../../dispatcher/store/sqlite/sqlite-delivery-store.ts";
import { createTestDatabase } from "../support/private-postgres.ts";

/** One fresh store of an engine, and what the suite needs around it. */
export interface OpenedEngine {
  store: Store;
  /** Another handle on the same data, as another process would open it. */
  reopen(): Promise<Store>;
  /** The dispatcher's port over the same data: it writes the delivery attempts the API reads. */
  openDispatcherLog(): DeliveryStore;
  /** Deletes the data (every handle is closed by then). */
  cleanup(): Promise<void>;
}

export type EngineFactory = () => Promise<OpenedEngine>;

const ENGINES: Record<string, EngineFactory> = {
  async sqlite() {
    const dir = mkdtempSync(join(tmpdir(), "tds-conformance-"));
    const path = join(dir, "store.sqlite");
    return {
      store: openSqliteStore(path),
      reopen: async () => openSqliteStore(path),
      openDispatcherLog: () => openSqliteDeliveryStore(path),
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
  async postgres() {
    // A database per test: the private cluster (or TEST_DATABASE_URL's server) is shared by the run.
    const database = await createTestDatabase("conformance");
    return {
      store: await openPostgresStore(database.url),
      reopen: () => openPostgresStore(database.url),
      openDispatcherLog: () => openPostgresDeliveryStore(database.url),
      cleanup: () => database.drop(),
    };
  },
};

/** The engine `TEST_STORE` names (sqlite when unset). @throws Error naming the engines there are, for any other name. */
export function chosenEngine(name = process.env.TEST_STORE || "sqlite"): {
  name: string;
  open: EngineFactory;
} {
  const open = ENGINES[name];
  if (!open)
    throw new Error(
      `TEST_STORE=${name}: no such store engine in test/store/engines.ts (${Object.keys(ENGINES).join(", ")})`,
    );
  return { name, open };
}
