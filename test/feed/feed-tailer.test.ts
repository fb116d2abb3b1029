/**
 * The tailer of one partition and its consumers: every batch to every consumer in order, whole mutations,
 * the position moved only once all took the batch. Real store and Redis; the consumers are the test's own,
 * recording what they get. The partition is acme's, where all of these tests' changes go.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { FeedBatch, FeedConsumer } from "../../api/feed/feed-consumer.ts";
import { createLease, type Lease } from "../../api/feed/feed-lease.ts";
import { createFeedTailer, type FeedTailerDeps } from "../../api/feed/feed-tailer.ts";
import type { FeedCursor } from "../../api/model/record-values.ts";
import { createLogger } from "../../common/log.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { partitionOf } from "../support/change-log.ts";
import { eventually } from "../support/eventually.ts";
import { graphqlClient } from "../support/graphql.ts";

/** The tailer's own position, apart from the app's feed (`main`), which these tests never start. */
const NAME = "tailer-test";

let t: TestApp;
let acme: ProvisionedTenant;
let tailers: ReturnType<typeof createFeedTailer>[] = [];
let partition = 0;
let lease: Lease;

beforeEach(async () => {
  t = await createTestApp();
  acme = await t.provision("acme");
  partition = partitionOf(t.store, acme.tenant.id);
  lease = createLease(t.redis.redis, `${t.redis.prefix}:tailer-lease`, 5000);
});
afterEach(async () => {
  await Promise.all(tailers.map((tailer) => tailer.stop()));
  tailers = [];
  await t.close();
});

function tailer(consumers: FeedConsumer[], options: Partial<FeedTailerDeps> = {}) {
  const created = createFeedTailer({
    store: t.store,
    partition,
    lease,
    consumers,
    log: createLogger("silent"),
    name: NAME,
    ...options,
  });
  tailers.push(created);
  return created;
}

/** A consumer that records each batch it is handed: `<name>:<the regions' names, by mutation>`. */
function recording(
  name: string,
  seen: string[],
  consume?: (batch: FeedBatch) => Promise<void>,
): FeedConsumer {
  return {
    name,
    async consume(batch) {
      const names = batch.mutations.map((m) =>
        m.map((entry) => entry.after?.Name ?? entry.before?.Name).join("+"),
      );
      seen.push(`${name}:${names.join(",")}`);
      await consume?.(batch);
    },
  };
}

/** Inserts regions in one mutation. */
async function insertRegions(...names: string[]) {
  const inserts = names.map((name, i) => `r${i}: insertRegions(input: {Name: "${name}", Timezone: "UTC"})`);
  const result = await graphqlClient(t, acme.adminToken)(`mutation { schema { ${inserts.join(" ")} } }`);
  expect(result.errors).toBeUndefined();
}

/** Passes what provisioning logged, so a test's batches hold its own mutations only. */
const skipProvisioning = () => tailer([]).processBatch();

const lastPosition = async () => (await t.store.readChanges(partition, null, 10_000)).next;
const storedPosition = () => {
  t.store.refreshReads();
  return t.store.feedPosition(NAME, partition);
};

describe("feed tailer", () => {
  test("a consumer's failure keeps the position and hands the batch again to every consumer, in order", async () => {
    await skipProvisioning();
    const before = await storedPosition();
    await insertRegions("a");
    await insertRegions("b", "c");
    const seen: string[] = [];
    let failing = true;
    const feed = tailer([
      recording("first", seen),
      recording("second", seen, async () => {
        if (failing) throw new Error("second consumer down");
      }),
      recording("third", seen),
    ]);

    await expect(feed.processBatch()).rejects.toThrow("second consumer down");
    expect(seen).toEqual(["first:a,b+c", "second:a,b+c"]);
    expect(await storedPosition()).toBe(before);

    failing = false;
    expect(await feed.processBatch()).toBe(3);
    expect(seen.slice(2)).toEqual(["first:a,b+c", "second:a,b+c", "third:a,b+c"]);
    expect(await storedPosition()).toBe(await lastPosition());

    expect(await feed.processBatch()).toBe(0);
    expect(seen).toHaveLength(5);
  });

  test("batches hold whole mutations in commit order, however small the batch size", async () => {
    await skipProvisioning();
    await insertRegions("a", "b", "c");
    await insertRegions("d");
    const seen: string[] = [];
    const feed = tailer([recording("only", seen)], { batchSize: 2 });
    expect(await feed.processBatch()).toBe(3);
    expect(await feed.processBatch()).toBe(1);
    expect(seen).toEqual(["only:a+b+c", "only:d"]);
  });

  test("while busy, a consumer's unit of work carries the position the previous batch reached", async () => {
    await skipProvisioning();
    const start = await storedPosition();
    await insertRegions("a");
    await insertRegions("b");
    const firstPosition = (await t.store.readChanges(partition, start, 1)).next;
    const carried: (FeedCursor | null)[] = [];
    const seen: string[] = [];
    const committing = recording("committing", seen, (batch) =>
      t.store.unitOfWork(async (tx) => {
        await batch.savePositionIn(tx);
        carried.push(await tx.feedPosition(NAME, partition));
      }),
    );
    // One mutation a batch, and no save on its own before the log runs dry.
    const feed = tailer([committing], { batchSize: 1, saveEveryMs: 60_000, idleMs: 20 });
    expect(await lease.hold()).toBe(true);
    feed.start();
    await eventually(async () => expect(await storedPosition()).toBe(await lastPosition()));
    expect(seen).toEqual(["committing:a", "committing:b"]);
    // The first batch had nothing to carry; the second carried the first one's position in its own commit.
    expect(carried).toEqual([start, firstPosition]);
  });

  test("after a batch that left the log dry, the reader waits for the next wake-up: no read at once, no save until the log stays dry for a poll", async () => {
    await skipProvisioning();
    const start = await storedPosition();
    const seen: string[] = [];
    let reads = 0;
    const counting = {
      ...t.store,
      readChanges: (...args: Parameters<typeof t.store.readChanges>) => {
        reads++;
        return t.store.readChanges(...args);
      },
    };
    const feed = tailer([recording("r", seen)], { store: counting, saveEveryMs: 60_000, idleMs: 1000 });
    expect(await lease.hold()).toBe(true);
    feed.start();
    await eventually(() => expect(reads).toBe(1)); // the first read, of an empty log, then a rest
    for (const name of ["a", "b", "c"]) {
      await insertRegions(name);
      feed.notify(); // as a commit in this process does
      await eventually(() => expect(seen.at(-1)).toBe(`r:${name}`));
    }
    // One read per wake-up, each consuming its mutation; none saved meanwhile (well within the poll).
    expect(reads).toBe(4);
    expect(await storedPosition()).toBe(start);
    // Dry for a whole poll interval: the next read finds nothing and saves the position reached.
    await eventually(async () => expect(await storedPosition()).toBe(await lastPosition()), {
      timeoutMs: 5000,
    });
    expect(reads).toBe(5);
  });
});
