/**
 * A scheduled webhook's definition and its BullMQ job scheduler change together or not at all, as
 * the client sees it (api/webhooks/webhook-service.ts): a cron BullMQ cannot schedule is answered
 * 400 with nothing stored (it used to be stored, then answered 500), and a scheduler Redis refuses
 * to save is answered 503 with the store as it was (it used to be 500 with the change stored).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Queue } from "bullmq";
import { connectRedis } from "../../common/redis.ts";
import { WEBHOOK_EVENT_QUEUE } from "../../common/redis-keys.ts";
import { freePort, type PrivateRedis, startPrivateRedis } from "../../scripts/private-redis.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { makeTempDir, removeTempDir } from "../support/temp-dirs.ts";

const scheduled = (name: string, cron: string) => ({
  name,
  url: "https://example.com/",
  type: "scheduled",
  cron,
});

/** The webhook's job scheduler's cron in the app's Redis, or null when it has none. */
async function schedulerCron(t: TestApp, redisUrl: string, webhookId: string): Promise<string | null> {
  const redis = connectRedis(redisUrl, () => undefined);
  const queue = new Queue(WEBHOOK_EVENT_QUEUE, { connection: redis, prefix: t.redis.keys.bullPrefix });
  try {
    return (await queue.getJobScheduler(webhookId))?.pattern ?? null;
  } finally {
    await queue.close();
    redis.disconnect();
  }
}

describe("a cron BullMQ cannot schedule", () => {
  let t: TestApp;
  let acme: ProvisionedTenant;
  beforeAll(async () => {
    t = await createTestApp();
    acme = await t.provision("acme");
  });
  afterAll(() => t.close());
  const admin = (method: string, path: string, body?: unknown) =>
    t.call(method, path, { token: acme.adminToken, body });

  test.each<[string, string]>([
    ["1,1 * * * *", "at position 2: minute: 1 listed more than once"],
    ["0 0 30 2 *", "at position 4: day of month: day 30 never occurs in February"],
    [
      `1-59/1,${Array.from({ length: 60 }, (_, i) => i).join(",")} * * * *`,
      "at position 9: minute: 1-59 listed more than once",
    ],
    ["0 0 * * 0,7", "at position 10: day of week: 0 listed more than once (0 and 7 are both Sunday)"],
  ])("POST %p: 400 validation_failed at cron, nothing stored", async (cron, message) => {
    const name = `cr-${crypto.randomUUID().slice(0, 8)}`;
    const { status, body } = await admin("POST", "/webhooks", scheduled(name, cron));
    expect({ status, errorType: body.errorType, details: body.details }).toEqual({
      status: 400,
      errorType: "validation_failed",
      details: [{ path: "cron", message }],
    });
    const listed = (await admin("GET", "/webhooks")).body.result as { name: string }[];
    expect(listed.map((w) => w.name)).not.toContain(name);
    // Nothing stored: the name is free.
    expect((await admin("POST", "/webhooks", scheduled(name, "0 0 * * *"))).status).toBe(201);
  });

  test("PUT of an impossible day: 400, the definition and its scheduler unchanged", async () => {
    const created = await admin("POST", "/webhooks", scheduled("monthly", "0 0 1 * *"));
    expect(created.status).toBe(201);
    const id = created.body.result.id as string;
    const { status, body } = await admin("PUT", `/webhooks/${id}`, scheduled("monthly", "0 0 31 4 *"));
    expect(status).toBe(400);
    expect(body.details).toEqual([
      { path: "cron", message: "at position 4: day of month: day 31 never occurs in April" },
    ]);
    expect((await admin("GET", `/webhooks/${id}`)).body.result).toMatchObject({ cron: "0 0 1 * *" });
    expect(await schedulerCron(t, t.redis.url, id)).toBe("0 0 1 * *");
  });
});

describe("when Redis refuses to save the scheduler", () => {
  let dir: string;
  let redis: PrivateRedis;
  let t: TestApp;
  let acme: ProvisionedTenant;
  // As after a failover that left the app on a replica: every write is answered READONLY. (A
  // memory limit would not do: Redis lets a script that has begun to write go on past it.)
  const refuseWrites = async (refuse: boolean) => {
    const connection = connectRedis(redis.url, () => undefined);
    // A master nobody listens on: the replica keeps its data and never syncs.
    await (refuse ? connection.replicaof("127.0.0.1", freePort()) : connection.replicaof("NO", "ONE"));
    connection.disconnect();
  };
  beforeAll(async () => {
    dir = makeTempDir("tds-sched-");
    redis = await startPrivateRedis(dir);
    t = await createTestApp({ REDIS_URL: redis.url });
    acme = await t.provision("acme");
  });
  afterAll(async () => {
    await refuseWrites(false);
    await t.close();
    await redis.stop();
    removeTempDir(dir);
  });
  const admin = (method: string, path: string, body?: unknown) =>
    t.call(method, path, { token: acme.adminToken, body });

  test("POST: 503 unavailable and no webhook stored; once Redis takes writes, the same POST creates it", async () => {
    await refuseWrites(true);
    try {
      const { status, body } = await admin("POST", "/webhooks", scheduled("nightly", "0 3 * * *"));
      expect({ status, errorType: body.errorType }).toEqual({ status: 503, errorType: "unavailable" });
      expect(body.message).toContain("nothing was changed");
      expect((await admin("GET", "/webhooks")).body.result).toEqual([]);
    } finally {
      await refuseWrites(false);
    }
    const created = await admin("POST", "/webhooks", scheduled("nightly", "0 3 * * *"));
    expect(created.status).toBe(201);
    expect(await schedulerCron(t, redis.url, created.body.result.id)).toBe("0 3 * * *");
  });

  test("webhooks of the other kinds have no scheduler: created, replaced and deleted as ever", async () => {
    const changes = (name: string) => ({
      name,
      url: "https://example.com/",
      type: "graphql",
      query: "subscription { schemaRegions { operation } }",
    });
    await refuseWrites(true);
    try {
      const created = await admin("POST", "/webhooks", changes("regions"));
      expect(created.status).toBe(201);
      const id = created.body.result.id as string;
      expect((await admin("PUT", `/webhooks/${id}`, changes("regions-2"))).status).toBe(200);
      expect((await admin("GET", `/webhooks/${id}`)).body.result).toMatchObject({ name: "regions-2" });
      expect((await admin("DELETE", `/webhooks/${id}`)).status).toBe(200);
      expect((await admin("GET", `/webhooks/${id}`)).status).toBe(404);
    } finally {
      await refuseWrites(false);
    }
  });

  test("PUT: 503 unavailable and the definition as it was, its scheduler too", async () => {
    const created = await admin("POST", "/webhooks", scheduled("hourly", "0 * * * *"));
    expect(created.status).toBe(201);
    const id = created.body.result.id as string;
    await refuseWrites(true);
    try {
      const { status, body } = await admin("PUT", `/webhooks/${id}`, scheduled("hourly-2", "30 * * * *"));
      expect({ status, errorType: body.errorType }).toEqual({ status: 503, errorType: "unavailable" });
    } finally {
      await refuseWrites(false);
    }
    expect((await admin("GET", `/webhooks/${id}`)).body.result).toMatchObject({
      name: "hourly",
      cron: "0 * * * *",
      enabled: true,
    });
    expect(await schedulerCron(t, redis.url, id)).toBe("0 * * * *");
  });
});
