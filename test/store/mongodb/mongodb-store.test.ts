/**
 * The experimental MongoDB store (api/store/mongodb/mongodb-store.ts) where it can be held to
 * something without a server: built on the driver's client for a loopback port nothing listens on
 * (no MongoDB server can run on this machine; the client never connects, and no request reaches
 * one). What needs a server is proven by the conformance suite when MONGODB_TEST_URL is set.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { MongoClient, MongoError } from "mongodb";
import { createMongoStore } from "../../../api/store/mongodb/mongodb-store.ts";
import type { Store, StoreWriter } from "../../../api/store/store.ts";
import { UnavailableError } from "../../../common/errors.ts";
import type { MongoEngine } from "../../../common/store/mongodb/mongodb-engine.ts";
import { ALL_PORT_MEMBERS, OPTIONAL_PORT_MEMBERS } from "../conformance/port-members.ts";
import { entry, writeConflict } from "./scripted-stream.ts";

const client = new MongoClient("mongodb://127.0.0.1:9/tds", { serverSelectionTimeoutMS: 200 });
const engine: MongoEngine = {
  engine: "mongodb",
  url: "mongodb://127.0.0.1:9/tds",
  client,
  db: client.db("tds"),
};
const store: Store = createMongoStore(engine, { attempts: 5 });
afterAll(() => store.close());

describe("the MongoDB store without a server", () => {
  test("a run thrown away leaves nothing behind: what it appended is not written by the run that commits", async () => {
    let runs = 0;
    // Runs 1 and 2 append an entry, then meet a (scripted) write conflict; run 3 appends nothing. Had
    // the entries of the runs thrown away been kept, run 3 would write them at its end and fail
    // reaching the (absent) server; it commits, as a transaction that sent nothing does.
    const value = await store.unitOfWork(async (tx) => {
      runs++;
      if (runs < 3) {
        await tx.appendChanges([entry(`m${runs}/0`)]);
        throw writeConflict();
      }
      return "done";
    });
    expect(value).toBe("done");
    expect(runs).toBe(3);
  });

  test("without the server, a unit of work that writes fails as UNAVAILABLE, not with the driver's error", async () => {
    const refused = await store
      .unitOfWork((tx) => tx.appendChanges([entry("m/0")]))
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "unavailable" });
  });

  test("every member of the port is the engine's own, but the optional ones it leaves out (readJson, onCommitted)", async () => {
    const expected = Object.keys(ALL_PORT_MEMBERS)
      .filter((name) => !(OPTIONAL_PORT_MEMBERS as readonly string[]).includes(name))
      .sort();
    expect(Object.keys(store).sort()).toEqual(expected);
    // A unit of work's writer has every member a unit may call: the port's, but those of the store alone.
    let inUnit: string[] = [];
    await store.unitOfWork(async (tx: StoreWriter) => {
      inUnit = Object.keys(tx);
    });
    const storeOnly = ["engine", "unitOfWork", "requestArrived", "refreshReads", "ping", "close"];
    expect(inUnit.sort()).toEqual(expected.filter((name) => !storeOnly.includes(name)));
  });

  test.each([
    ["catalogueVersion", () => store.catalogueVersion("t")],
    ["findTenantByName", () => store.findTenantByName("acme")],
    ["loadCustomDefinitions", () => store.loadCustomDefinitions("t")],
    ["listWebhooks", () => store.listWebhooks("t")],
    ["findConfigVariable", () => store.findConfigVariable("t", "KEY")],
    ["feedPosition", () => store.feedPosition("main", 0)],
  ] as [string, () => Promise<unknown>][])(
    "a read outside a unit of work without the server (%s) fails as UNAVAILABLE, not with the driver's error",
    async (_, read) => {
      const refused = await read().catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(UnavailableError);
      expect(refused).not.toBeInstanceOf(MongoError);
    },
  );

  test("the health check answers false, quickly, when the server cannot be reached", async () => {
    const started = performance.now();
    expect(await store.ping()).toBe(false);
    expect(performance.now() - started).toBeLessThan(3_000);
  });
});
