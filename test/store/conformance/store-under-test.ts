/**
 * The store each conformance test runs against: a fresh, empty store of the
 * chosen engine per test, seen through the recording proxy, closed and
 * deleted after the test with every other handle the test opened.
 */
import { afterEach, beforeEach } from "bun:test";
import type { Store } from "../../../api/store/store.ts";
import type { DeliveryStore } from "../../../common/delivery-log/delivery-store.ts";
import type { EngineFactory, OpenedEngine } from "../engines.ts";
import { recordingStore } from "./recording-store.ts";

export interface StoreUnderTest {
  /** The engine's name (`TEST_STORE`). */
  readonly engine: string;
  /** This test's store. */
  readonly store: Store;
  /** Another handle on this test's data (recorded too); closed after the test. */
  reopen(): Promise<Store>;
  /** The dispatcher's delivery-log port over this test's data; closed after the test. */
  dispatcherLog(): Promise<DeliveryStore>;
  /** Another fresh, empty store of the same engine (recorded too), as a copy's target; dropped after the test. */
  another(): Promise<Store>;
}

/** Registers, in the calling `describe`, the hooks that open and drop a store around each test. */
export function useStoreUnderTest(engine: string, open: EngineFactory, called: Set<string>): StoreUnderTest {
  let opened: OpenedEngine | null = null;
  let store: Store | null = null;
  let closers: (() => Promise<void>)[] = [];

  // The first opening may start the run's private PostgreSQL cluster: seconds on a busy machine.
  beforeEach(async () => {
    opened = await open();
    store = recordingStore(opened.store, called);
    closers = [];
  }, 60_000);
  afterEach(async () => {
    for (const close of closers) await close();
    await store?.close();
    await opened?.cleanup();
    opened = null;
    store = null;
  });

  const current = (): OpenedEngine => {
    if (!opened) throw new Error("no store open: use it inside a test");
    return opened;
  };
  return {
    engine,
    get store() {
      current();
      return store as Store;
    },
    async reopen() {
      const other = recordingStore(await current().reopen(), called);
      closers.push(() => other.close());
      return other;
    },
    async dispatcherLog() {
      const log = await current().openDispatcherLog();
      closers.push(() => log.close());
      return log;
    },
    async another() {
      current();
      const fresh = await open();
      const other = recordingStore(fresh.store, called);
      closers.push(async () => {
        await other.close();
        await fresh.cleanup();
      });
      return other;
    },
  };
}
