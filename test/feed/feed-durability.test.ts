/** The feed across restarts, Redis outages and a second reader: nothing committed is lost or doubled. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLease } from "../../api/feed/feed-lease.ts";
import { connectRedis } from "../../common/redis.ts";

import { startPrivateRedis } from "../../scripts/private-redis.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { partitionOf } from "../support/change-log.ts";
import { eventually } from "../support/eventually.ts";
import { graphqlClient } from "../support/graphql.ts";
import { queuedJobs } from "../support/queue.ts";
import { openTestRedis } from "../support/redis.ts";

async function withWebhook(t: TestApp, token: string) {
  const created = await t.call("POST", "/webhooks", {
    token,
    body: {
      name: "regions",
      url: "https://receiver.example.com/",
      type: "graphql",
      query: "subscription { schemaRegions { operation data { Name } } }",
    },
  });
  expect(created.status).toBe(201);
  return created.body.result.id as string;
}

/** Moves every partition's saved position back to its start, as a crash before the saves would leave it. */
const forgetPositions = (t: TestApp) =>
  t.store.unitOfWork(async (tx) => {
    for (let p = 0; p < tx.feedPartitions(); p++) await tx.setFeedPosition("main", p, null, Date.now());
  });

const insertRegion = (t: TestApp, token: string, name: string) =>
  graphqlClient(t, token)(`mutation { schema { insertRegions(input: {Name: "${name}", Timezone: "UTC"}) } }`);

describe("change feed durability", () => {
  test("stopped after commits but before enqueue: on start the jobs appear exactly once", async () => {
    const first = await createTestApp();
    const acme = await first.provision("acme");
    await withWebhook(first, acme.adminToken);
    for (const name of ["a", "b", "c"])
      expect((await insertRegion(first, acme.adminToken, name)).errors).toBeUndefined();
    await first.store.close(); // the process stops: nothing was enqueued

    const second = await createTestApp({ ...first.storeEnv, REDIS_PREFIX: first.redis.prefix });
    try {
      expect(await queuedJobs(first.redis)).toEqual([]);
      await second.feed.processBatch();
      const jobs = await queuedJobs(first.redis);
      expect(
        jobs
          .map(
            (j) =>
              ((j.data.body as unknown[])[0] as { data: { schemaRegions: { data: { Name: string } } } }).data
                .schemaRegions.data.Name,
          )
          .sort(),
      ).toEqual(["a", "b", "c"]);
      // A crash after enqueue but before the position was saved: the batch is read again, and nothing doubles.
      await forgetPositions(second);
      await second.feed.processBatch();
      expect((await queuedJobs(first.redis)).length).toBe(3);
      expect(await second.feed.processBatch()).toBe(0);
    } finally {
      await second.close();
      await first.redis.close();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });

  test("a mutation split into parts, read again after a crash: the same parts, not one more job or row", async () => {
    // 150 bytes: each Regions element (~60 bytes) of a five-insert mutation fits two to a part.
    const t = await createTestApp({ DELIVERY_MAX_BODY_BYTES: "150" });
    try {
      const acme = await t.provision("acme");
      const webhookId = await withWebhook(t, acme.adminToken);
      const inserts = ["a", "b", "c", "d", "e"].map(
        (name) => `${name}: insertRegions(input: {Name: "${name}", Timezone: "UTC"})`,
      );
      const result = await graphqlClient(t, acme.adminToken)(`mutation { schema { ${inserts.join(" ")} } }`);
      expect(result.errors).toBeUndefined();
      await t.feed.processBatch();
      const names = (jobs: Awaited<ReturnType<typeof queuedJobs>>) =>
        jobs
          .sort((x, y) => (x.data.part ?? 0) - (y.data.part ?? 0))
          .map((j) =>
            j.data.body.map(
              (e) =>
                (e as { data: { schemaRegions: { data: { Name: string } } } }).data.schemaRegions.data.Name,
            ),
          );
      const first = await queuedJobs(t.redis);
      expect(names(first)).toEqual([["a", "b"], ["c", "d"], ["e"]]);
      for (const job of first)
        expect(Buffer.byteLength(JSON.stringify(job.data.body))).toBeLessThanOrEqual(150);

      await forgetPositions(t);
      await t.feed.processBatch();
      const again = await queuedJobs(t.redis);
      expect(again.map((j) => [j.id, j.data.deliveryId])).toEqual(
        first.map((j) => [j.id, j.data.deliveryId]),
      );
      const log = await t.call("GET", `/webhooks/${webhookId}/deliveries`, { token: acme.adminToken });
      expect(log.body.result.map((d: { part: number }) => d.part).sort()).toEqual([0, 1, 2]);
    } finally {
      await t.close();
    }
  });

  test("a local commit wakes the reader at once, however long its poll interval", async () => {
    const t = await createTestApp({ FEED_POLL_MS: "60000" });
    try {
      const acme = await t.provision("acme");
      await withWebhook(t, acme.adminToken);
      t.feed.start();
      await Bun.sleep(50);
      const committed = Date.now();
      await insertRegion(t, acme.adminToken, "fast");
      await eventually(async () => expect((await queuedJobs(t.redis)).length).toBe(1), {
        timeoutMs: 2000,
        intervalMs: 5,
      });
      expect(Date.now() - committed).toBeLessThan(1000);
    } finally {
      await t.close();
    }
  });

  test("the running feed saves the position it reached once the log has stayed dry for a poll, and a restart redoes nothing", async () => {
    const first = await createTestApp({ FEED_POLL_MS: "20" });
    const acme = await first.provision("acme");
    await withWebhook(first, acme.adminToken);
    first.feed.start();
    for (const name of ["a", "b", "c", "d"])
      expect((await insertRegion(first, acme.adminToken, name)).errors).toBeUndefined();
    const partition = partitionOf(first.store, acme.tenant.id);
    const { next: latest } = await first.store.readChanges(partition, null, 100);
    // Well within the feed's longest wait between saves (1 s): saved because the log stayed dry for a poll (20 ms).
    await eventually(
      async () => {
        first.store.refreshReads();
        expect(await first.store.feedPosition("main", partition)).toBe(latest);
      },
      { timeoutMs: 600 },
    );
    expect((await queuedJobs(first.redis)).length).toBe(4);
    await first.store.close(); // killed: the feed's loop never got to stop

    const second = await createTestApp({ ...first.storeEnv, REDIS_PREFIX: first.redis.prefix });
    try {
      expect(await second.feed.processBatch()).toBe(0);
    } finally {
      await second.close();
      await first.redis.close();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });

  test("while Redis is away, writes succeed; when it returns, the feed catches up", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tds-outage-"));
    let redis = await startPrivateRedis(dir);
    const t = await createTestApp({ REDIS_URL: redis.url, FEED_POLL_MS: "50" });
    try {
      const acme = await t.provision("acme");
      await withWebhook(t, acme.adminToken);
      t.feed.start();
      await redis.stop();
      for (const name of ["x", "y"])
        expect((await insertRegion(t, acme.adminToken, name)).errors).toBeUndefined();
      await Bun.sleep(300);
      redis = await startPrivateRedis(dir, redis.port);
      const connection = connectRedis(redis.url, () => undefined);
      const probe = { ...t.redis, redis: connection };
      await eventually(async () => expect((await queuedJobs(probe)).length).toBe(2), { timeoutMs: 10_000 });
      connection.disconnect();
    } finally {
      await t.close();
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  test("one lease holder at a time", async () => {
    const r = openTestRedis();
    try {
      const a = createLease(r.redis, `${r.prefix}:lease`, 5000, "a");
      const b = createLease(r.redis, `${r.prefix}:lease`, 5000, "b");
      expect([a.held(), b.held()]).toEqual([false, false]);
      expect(await a.hold()).toBe(true);
      expect(await b.hold()).toBe(false);
      expect([a.held(), b.held()]).toEqual([true, false]);
      expect(await r.redis.get(`${r.prefix}:lease`)).toBe("a");
      expect(await a.hold()).toBe(true);
      await a.release();
      expect(a.held()).toBe(false);
      expect(await b.hold()).toBe(true);
      expect(await a.hold()).toBe(false);
      // A holder that lost count of its lease (a hold whose answer came late) finds it its own again.
      const again = createLease(r.redis, `${r.prefix}:lease`, 5000, "b");
      expect(await again.hold()).toBe(true);
      expect(await r.redis.pttl(`${r.prefix}:lease`)).toBeGreaterThan(4000);
    } finally {
      await r.close();
    }
  });
});
