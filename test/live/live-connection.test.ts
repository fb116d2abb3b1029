/**
 * The socket shell's send-buffer bound: a client that never reads (its socket's buffer only
 * grows) is closed with 1013 once the next message would pass LIVE_MAX_BUFFERED_BYTES, and the
 * buffer never holds more than the bound. The socket here is a recording stand-in for Bun's
 * ServerWebSocket (what it buffers is what the shell sent); everything else is the real code.
 */
import { expect, test } from "bun:test";
import { createLiveConnection } from "../../api/live/live-connection.ts";
import { createLiveHub } from "../../api/live/live-hub.ts";
import type { ObjectDef } from "../../api/model/catalogue.ts";
import type { Subscription } from "../../api/subscriptions/subscription.ts";
import { createLogger } from "../../common/log.ts";

/** A subscription to every change of Jobs (what the hub files; the events here are sent directly). */
const SUBSCRIPTION: Subscription = {
  object: { name: "Jobs", fields: [] } as unknown as ObjectDef,
  rootKey: "schemaJobs",
  operations: null,
  filter: null,
  extendedFilter: null,
  members: [{ key: "operation", kind: "operation" }],
  watched: [],
};

test("a slow client is closed with 1013 and its buffer stays under the bound", async () => {
  const bound = 10_000;
  let buffered = 0;
  const closes: number[] = [];
  const socket = {
    send: (text: string) => {
      buffered += text.length;
      return -1;
    },
    getBufferedAmount: () => buffered,
    close: (code: number) => void closes.push(code),
  };
  const hub = createLiveHub(10, { tenantWatched: async () => undefined, tenantUnwatched: () => undefined });
  const connection = createLiveConnection({
    protocol: "graphql-transport-ws",
    socket,
    upgradeAuthorization: null,
    authenticate: async () => ({
      tenantId: "t",
      userId: "u",
      username: "u",
      roles: [],
      tokenId: "k",
      expiresAt: null,
    }),
    compile: async () => SUBSCRIPTION,
    hub,
    limits: { maxSubscriptionsPerConnection: 10, maxBufferedBytes: bound, initTimeoutMs: 10_000 },
    log: createLogger("silent"),
    onClosed: () => undefined,
  });
  connection.receive({ type: "connection_init", payload: { Authorization: "Bearer x" } });
  await Bun.sleep(0);
  connection.receive({ type: "subscribe", id: "1", payload: { query: "subscription { x }" } });
  await Bun.sleep(0);
  expect(hub.counts()).toEqual({ connections: 1, subscriptions: 1 });
  const event = { data: { schemaJobs: { operation: "INSERT", data: { Name: "x".repeat(500) } } } };
  for (let i = 0; i < 1000; i++) connection.handle.deliver("1", event);
  expect(closes).toEqual([1013]);
  expect(buffered).toBeLessThanOrEqual(bound);
  expect(hub.counts()).toEqual({ connections: 0, subscriptions: 0 });
});
