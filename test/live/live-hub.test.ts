/**
 * The hub's index as the fan-out uses it: subscriptions pinned to a record's UID are candidates
 * only for that record's changes, and leave the index when unsubscribed, replaced or released; a
 * tenant's connections are admitted once its one watch is in place.
 */
import { expect, test } from "bun:test";
import { prepareFilter } from "../../api/eql/check-filter.ts";
import { createLiveHub, type LiveSubscriberConnection } from "../../api/live/live-hub.ts";
import type { ChangeEntry } from "../../api/model/record-values.ts";
import type { Subscription } from "../../api/subscriptions/subscription.ts";
import { TEST_CATALOGUE, testObject } from "../eql/support/test-catalogue.ts";

const THINGS = testObject("Things");
const pinnedTo = (uid: string | null): Subscription => ({
  object: THINGS,
  rootKey: "schemaThings",
  operations: null,
  filter: uid === null ? null : prepareFilter(`UID == '${uid}'`, THINGS, TEST_CATALOGUE),
  extendedFilter: null,
  members: [{ key: "operation", kind: "operation" }],
  watched: [],
});
const updateOf = (uid: string): ChangeEntry[] => [
  {
    tenantId: "t",
    objectName: "Things",
    operation: "UPDATE",
    uid,
    before: { UID: uid },
    after: { UID: uid },
    mutationId: "m",
    sequence: 0,
    committedAt: 0,
  },
];
const connection = (): LiveSubscriberConnection => ({
  deliver: () => undefined,
  revoke: () => undefined,
  shutdown: () => undefined,
  keepAlive: () => undefined,
});

test("1,000 connections each pinned to its record: one candidate per change; gone when released", async () => {
  const hub = createLiveHub(10_000, {
    tenantWatched: async () => undefined,
    tenantUnwatched: () => undefined,
  });
  const token = { tenantId: "t", tokenId: "k" };
  const connections = Array.from({ length: 1000 }, connection);
  for (const [i, c] of connections.entries()) {
    await hub.admit(c, token);
    hub.subscribe(c, "1", pinnedTo(`thing-${i}`));
  }
  const scanning = connections[0] as LiveSubscriberConnection;
  hub.subscribe(scanning, "2", pinnedTo(null));
  const ids = (uid: string) =>
    hub.candidatesOf("t", updateOf(uid)).map((s) => `${connections.indexOf(s.connection)}/${s.id}`);
  expect(ids("thing-7")).toEqual(["7/1", "0/2"]);
  expect(ids("thing-none")).toEqual(["0/2"]);
  hub.subscribe(connections[7] as LiveSubscriberConnection, "1", pinnedTo("thing-8"));
  expect(ids("thing-7")).toEqual(["0/2"]);
  expect(ids("thing-8")).toEqual(["8/1", "0/2", "7/1"]);
  hub.unsubscribe(connections[8] as LiveSubscriberConnection, "1");
  hub.release(scanning);
  expect(ids("thing-8")).toEqual(["7/1"]);
  expect(hub.counts()).toEqual({ connections: 999, subscriptions: 998 });
  for (const c of connections) hub.release(c);
  expect(hub.hasSubscribers("t")).toBe(false);
});

test("a tenant's second connection admitted while its first watch is under way waits for that watch", async () => {
  let watched = () => {};
  const watches: string[] = [];
  const hub = createLiveHub(10, {
    tenantWatched: (tenantId) => {
      watches.push(tenantId);
      return new Promise<void>((resolve) => {
        watched = resolve;
      });
    },
    tenantUnwatched: () => undefined,
  });
  const token = { tenantId: "t", tokenId: "k" };
  const admitted: string[] = [];
  const first = hub.admit(connection(), token).then(() => admitted.push("first"));
  const second = hub.admit(connection(), token).then(() => admitted.push("second"));
  await Bun.sleep(5);
  expect({ watches, admitted }).toEqual({ watches: ["t"], admitted: [] });
  watched();
  await Promise.all([first, second]);
  expect(admitted).toEqual(["first", "second"]);
});
