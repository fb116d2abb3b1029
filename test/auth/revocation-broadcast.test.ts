/**
 * The revocation broadcast over the run's real Redis, between two "processes" (a publisher and a
 * subscriber connection each): a revocation resolves only once every process told has dropped the
 * token, however late one reads its messages; one that does not answer within the wait is given up
 * on (and counted), never waited for forever; malformed messages are ignored.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import type { Redis } from "ioredis";
import { createRevocationBroadcast } from "../../api/auth/revocation-broadcast.ts";
import { connectRedis } from "../../common/redis.ts";
import { openTestRedis, type TestRedis } from "../support/redis.ts";

let redis: TestRedis;
let connections: Redis[] = [];

beforeEach(() => {
  redis = openTestRedis();
  connections = [];
});
afterEach(async () => {
  for (const connection of connections) connection.disconnect();
  await redis.close();
});

/** One process's side: its connections, its broadcast, and what it was told, in order. */
async function processSide(ackWaitMs = 2000) {
  const publisher = connectRedis(redis.url, () => undefined);
  const subscriber = connectRedis(redis.url, () => undefined);
  connections.push(publisher, subscriber);
  const dropped: string[] = [];
  const broadcast = createRevocationBroadcast({
    publisher,
    subscriber,
    channel: `${redis.prefix}:revocations`,
    ackChannel: `${redis.prefix}:acks`,
    onRevoked: (tenantId, jti) => dropped.push(`${tenantId}/${jti}`),
    onSubscribed: () => undefined,
    ackWaitMs,
  });
  await broadcast.start();
  return { broadcast, subscriber, publisher, dropped };
}

/** Holds back what `subscriber` reads for `ms` (a process busy elsewhere), as the socket does nothing meanwhile. */
function readLate(subscriber: Redis, ms: number): void {
  const stream = (subscriber as unknown as { stream: { pause(): void; resume(): void } }).stream;
  stream.pause();
  setTimeout(() => stream.resume(), ms);
}

test("a revocation resolves only once every process told has dropped the token, a slow reader too", async () => {
  const a = await processSide();
  const b = await processSide();
  readLate(b.subscriber, 300);
  const started = performance.now();
  const told = await a.broadcast.publish("t1", "j1");
  // Before the answers were awaited, it resolved at once, with B yet to read the message.
  expect(b.dropped).toEqual(["t1/j1"]);
  expect(a.dropped).toEqual(["t1/j1"]);
  expect(told).toEqual({ told: 2, acknowledged: 2 });
  expect(performance.now() - started).toBeGreaterThanOrEqual(250);
});

test("a process that does not answer in time is given up on and counted, not waited for", async () => {
  const a = await processSide(150);
  const b = await processSide();
  readLate(b.subscriber, 1000);
  const started = performance.now();
  expect(await a.broadcast.publish("t1", "j2")).toEqual({ told: 2, acknowledged: 1 });
  expect(performance.now() - started).toBeLessThan(900);
  expect(b.dropped).toEqual([]);
});

test("malformed messages on the channel are ignored", async () => {
  const a = await processSide();
  for (const text of ["not json", "{}", JSON.stringify({ id: "x", tenantId: "", jti: "j" })])
    await a.publisher.publish(`${redis.prefix}:revocations`, text);
  expect(await a.broadcast.publish("t1", "j3")).toEqual({ told: 1, acknowledged: 1 });
  expect(a.dropped).toEqual(["t1/j3"]);
});
