/**
 * The dispatcher's port on MongoDB (common/delivery-log/mongodb/mongodb-delivery-store.ts)
 * where it can be held to something without a server: built on the driver's client for a
 * loopback port nothing listens on (no MongoDB server can run on this machine; the client never
 * connects). Every member reaches the driver (none is refused as not implemented, the dispatcher
 * starts on the engine) and, with no server, fails as UNAVAILABLE, within the bounded runs of a
 * transaction, never with the driver's error. What needs a server is the conformance suite's
 * (MONGODB_TEST_URL), which opens this port through openDeliveryStore.
 */
import { describe, expect, test } from "bun:test";
import { MongoClient } from "mongodb";
import type { DeliveryStore } from "../../../common/delivery-log/delivery-store.ts";
import { createMongoDeliveryStore } from "../../../common/delivery-log/mongodb/mongodb-delivery-store.ts";
import { UnavailableError } from "../../../common/errors.ts";
import type { MongoEngine } from "../../../common/store/mongodb/mongodb-engine.ts";
import { freePort } from "../../../scripts/private-redis.ts";

/**
 * The port on a client of its own: a client that never connected closes itself once its first
 * operation found no server (the driver's auto-connect), so each case gets a fresh one.
 */
function unreachableStore(): DeliveryStore {
  const url = `mongodb://127.0.0.1:${freePort()}/tds`;
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 200 });
  const engine: MongoEngine = { engine: "mongodb", url, client, db: client.db("tds") };
  return createMongoDeliveryStore(engine, { attempts: 3 });
}

const outcome = { startedAt: 1, durationMs: 1, statusCode: 200, responseBody: null, error: null };

describe("the dispatcher's port on MongoDB without a server", () => {
  const calls: [string, (store: DeliveryStore) => Promise<unknown>][] = [
    ["loadDelivery", (store) => store.loadDelivery("ta", "d-1", "w1")],
    ["findVariables", (store) => store.findVariables("ta", ["KEY"])],
    [
      "startAttempt",
      (store) =>
        store.startAttempt({
          tenantId: "ta",
          deliveryId: "d-1",
          webhookId: "w1",
          webhookVersion: 1,
          startedAt: 1,
          request: { url: "https://r.example", headers: {} },
        }),
    ],
    ["finishAttempt", (store) => store.finishAttempt("ta", "d-1", 1, outcome, "succeeded")],
    ["recordAttempt", (store) => store.recordAttempt("ta", "d-1", outcome, "succeeded")],
    ["disableWebhook", (store) => store.disableWebhook("ta", "w1", "410 Gone", 1)],
  ];
  for (const [member, call] of calls)
    test(`${member} fails as UNAVAILABLE within 5 s, not with the driver's error`, async () => {
      const store = unreachableStore();
      const started = performance.now();
      const refused = await call(store).catch((error: unknown) => error);
      await store.close();
      expect(refused).toBeInstanceOf(UnavailableError);
      expect(refused).toMatchObject({ code: "unavailable" });
      expect(performance.now() - started).toBeLessThan(5_000);
    });

  test("no variable asked for: none read, no server needed", async () => {
    const store = unreachableStore();
    expect(await store.findVariables("ta", [])).toEqual([]);
    await store.close();
  });
});
