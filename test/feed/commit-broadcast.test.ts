/**
 * The commit hint across processes, over the test run's real Redis: a commit in one process wakes the
 * listeners of another (where the partition's reader may hold the lease) with the partition it went
 * to, its own at once and once only; a commit to a partition read in the committing process is not
 * published at all.
 */
import { afterEach, expect, test } from "bun:test";
import { createCommitBroadcast } from "../../api/feed/commit-broadcast.ts";
import { eventually } from "../support/eventually.ts";
import { openTestRedis, type TestRedis } from "../support/redis.ts";

const opened: TestRedis[] = [];
const subscribers: { disconnect(): void }[] = [];
afterEach(async () => {
  for (const s of subscribers.splice(0)) s.disconnect();
  for (const r of opened.splice(0)) await r.close();
});

/** One "process": its own connections, the same channel. */
async function processOn(channel: string) {
  const redis = openTestRedis();
  opened.push(redis);
  const subscriber = redis.redis.duplicate();
  subscribers.push(subscriber);
  const signal = createCommitBroadcast({ publisher: redis.redis, subscriber, channel });
  await signal.start();
  const woken: number[] = [];
  signal.listen((partition) => woken.push(partition));
  return { signal, woken: () => woken.length, partitions: () => woken };
}

test("a commit in one process wakes another's listeners of its partition; its own at once and once; a burst is one hint", async () => {
  const channel = `test-${crypto.randomUUID()}:feed:commits`;
  const a = await processOn(channel);
  const b = await processOn(channel);

  a.signal.notify(7);
  expect(a.partitions()).toEqual([7]);
  await eventually(() => expect(b.partitions()).toEqual([7]));

  // Ten commits in one turn to two partitions: ten local wake-ups, one message naming both for the others.
  for (let i = 0; i < 10; i++) a.signal.notify(i % 2 === 0 ? 3 : 12);
  expect(a.woken()).toBe(11);
  await eventually(() => expect(b.woken()).toBe(3));
  await Bun.sleep(100);
  expect([a.woken(), b.woken()]).toEqual([11, 3]);
  expect(b.partitions()).toEqual([7, 3, 12]);
});

test("a steady stream of commits is published at most once per 5 ms, and the last one is always told", async () => {
  const channel = `test-${crypto.randomUUID()}:feed:commits`;
  const a = await processOn(channel);
  const b = await processOn(channel);
  const started = performance.now();
  // 100 commits a millisecond or so apart: one message each before the gap (100 here).
  for (let i = 0; i < 100; i++) {
    a.signal.notify(0);
    await Bun.sleep(1);
  }
  const elapsed = performance.now() - started;
  await Bun.sleep(50);
  const told = b.woken();
  expect(a.woken()).toBe(100);
  expect(told).toBeGreaterThanOrEqual(2);
  // (Timers may fire a little early: a gap of 4 ms is allowed for.)
  expect(told).toBeLessThanOrEqual(Math.ceil(elapsed / 4) + 2);
  // A commit after the stream is told too (the trailing hint), soon.
  a.signal.notify(0);
  await eventually(() => expect(b.woken()).toBe(told + 1));
});

test("another channel (another store's processes) wakes nobody here", async () => {
  const a = await processOn(`test-${crypto.randomUUID()}:feed:commits`);
  const b = await processOn(`test-${crypto.randomUUID()}:feed:commits`);
  a.signal.notify(0);
  await Bun.sleep(200);
  expect(b.woken()).toBe(0);
});

test("a commit to a partition whose reader runs here wakes it and is not published", async () => {
  const channel = `test-${crypto.randomUUID()}:feed:commits`;
  const a = await processOn(channel);
  const b = await processOn(channel);
  const readHere: number[] = [];
  a.signal.listen(
    (partition) => readHere.push(partition),
    (partition) => partition === 7,
  );
  a.signal.notify(7);
  expect(readHere).toEqual([7]);
  await Bun.sleep(100);
  expect(b.partitions()).toEqual([]);
  // One read elsewhere is still told to the others.
  a.signal.notify(3);
  await eventually(() => expect(b.partitions()).toEqual([3]));
  expect(readHere).toEqual([7, 3]);
});
