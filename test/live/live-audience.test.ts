/**
 * Who listens live where, over the test run's real Redis, between "processes" (each its own
 * connections, the same channels): a tenant one process starts listening to is heard by every
 * other once `listen` has resolved, an unlistened one lapses within three refreshes while one still
 * listened to stays, a process started later knows every listened tenant once it has started (its
 * roll call answered), and takes every tenant as heard for a round when one process did not answer;
 * what is not an announcement changes nothing. Then the live consumer: only heard tenants' changes
 * are published.
 */
import { afterEach, expect, test } from "bun:test";
import { createLiveConsumer } from "../../api/feed/live-consumer.ts";
import { createLiveAudience, type LiveAudience } from "../../api/live/live-audience.ts";
import type { FeedCursor, LoggedChange } from "../../api/model/record-values.ts";
import { eventually } from "../support/eventually.ts";
import { openTestRedis, type TestRedis } from "../support/redis.ts";

const REFRESH_MS = 100;
const opened: TestRedis[] = [];
const closers: (() => void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) close();
  for (const r of opened.splice(0)) await r.close();
});

/** One "process" on the shared channels of `prefix`'s keys. */
async function processOn(channels: { channel: string; ackChannel: string }): Promise<LiveAudience> {
  const redis = openTestRedis();
  opened.push(redis);
  const subscriber = redis.redis.duplicate();
  const audience = createLiveAudience({
    publisher: redis.redis,
    subscriber,
    ...channels,
    refreshMs: REFRESH_MS,
    ackWaitMs: 200,
  });
  closers.push(() => {
    audience.stop();
    subscriber.disconnect();
  });
  await audience.start();
  return audience;
}

const channelsOfTest = () => {
  const id = crypto.randomUUID();
  return { channel: `test-${id}:live-audience`, ackChannel: `test-${id}:live-audience:acks` };
};

/** Past the unsure round a process spends when its roll call went unanswered (one refresh and the ack wait). */
const pastTheFirstRound = () => Bun.sleep(REFRESH_MS + 250);

test("a tenant is heard everywhere once listen resolves; an unlistened one lapses, a listened one stays", async () => {
  const channels = channelsOfTest();
  const a = await processOn(channels);
  const b = await processOn(channels);
  // Started, the roll called and answered: nobody listens to anything yet.
  expect([...b.heard(["t1", "t2"])]).toEqual([]);

  await a.listen("t1");
  // At once, no waiting: the guarantee is that b knows before listen resolves.
  expect([...b.heard(["t1", "t2"])]).toEqual(["t1"]);
  expect([...a.heard(["t1", "t2"])]).toEqual(["t1"]);
  await b.listen("t2");
  expect([...a.heard(["t1", "t2"])]).toEqual(["t1", "t2"]);

  a.unlisten("t1");
  await eventually(() => expect([...b.heard(["t1", "t2"])]).toEqual(["t2"]), {
    timeoutMs: 5 * REFRESH_MS + 500,
  });
  // Refreshed all along: t2 outlives several leases.
  await Bun.sleep(4 * REFRESH_MS);
  expect([...a.heard(["t1", "t2"])]).toEqual(["t2"]);
});

test("a process started later knows the tenants listened to once started; while one process does not answer, it takes all as heard for a round", async () => {
  const channels = channelsOfTest();
  const a = await processOn(channels);
  await a.listen("t1");
  const late = await processOn(channels);
  expect([...late.heard(["t1", "t9"])]).toEqual(["t1"]);

  // A subscriber that never answers: the next process cannot be sure, so every tenant counts for a round.
  const raw = openTestRedis();
  opened.push(raw);
  const deaf = raw.redis.duplicate();
  closers.push(() => deaf.disconnect());
  await deaf.subscribe(channels.channel);
  const unsure = await processOn(channels);
  expect([...unsure.heard(["t1", "t9"])]).toEqual(["t1", "t9"]);
  await pastTheFirstRound();
  expect([...unsure.heard(["t1", "t9"])]).toEqual(["t1"]);
});

test("what is not an announcement on the channel changes nothing and breaks nothing", async () => {
  const channels = channelsOfTest();
  const a = await processOn(channels);
  const raw = openTestRedis();
  opened.push(raw);
  for (const text of [
    "",
    "null",
    "{",
    '{"id":"x"}',
    '{"id":"x","tenants":"t1"}',
    '{"id":"","tenants":["t1"]}',
    `{"id":"x","tenants":[1]}`,
  ])
    await raw.redis.publish(channels.channel, text);
  await Bun.sleep(50);
  expect([...a.heard(["t1"])]).toEqual([]);
  await a.listen("t2");
  expect([...a.heard(["t1", "t2"])]).toEqual(["t2"]);
});

test("the live consumer publishes the changes of heard tenants only, one message each in commit order", async () => {
  const redis = openTestRedis();
  opened.push(redis);
  const listener = redis.redis.duplicate();
  closers.push(() => listener.disconnect());
  const received: { channel: string; message: unknown }[] = [];
  listener.on("message", (channel: string, text: string) =>
    received.push({ channel, message: JSON.parse(text) }),
  );
  await listener.subscribe(redis.keys.liveChannel("heard"), redis.keys.liveChannel("unheard"));
  const consumer = createLiveConsumer({
    heard: (tenantIds) => new Set(tenantIds.filter((tenantId) => tenantId === "heard")),
    publish: async (tenantId, message) => {
      await redis.redis.publish(redis.keys.liveChannel(tenantId), message);
    },
  });
  const change = (tenantId: string, mutationId: string): LoggedChange => ({
    cursor: mutationId as FeedCursor,
    tenantId,
    objectName: "Regions",
    operation: "INSERT",
    uid: mutationId,
    before: null,
    after: { Name: mutationId },
    mutationId,
    sequence: 0,
    committedAt: 1,
  });
  const mutations = [[change("heard", "m1")], [change("unheard", "m2")], [change("heard", "m3")]];
  await consumer.consume({ entries: mutations.flat(), mutations, savePositionIn: async () => undefined });
  await eventually(() => expect(received.length).toBe(1));
  await Bun.sleep(50);
  expect(received).toEqual([
    {
      channel: redis.keys.liveChannel("heard"),
      message: { tenantId: "heard", mutations: [[change("heard", "m1")], [change("heard", "m3")]] },
    },
  ]);
});
