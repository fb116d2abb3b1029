import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Queue } from "bullmq";
import { type DeliveryJob, deliveryJobId } from "../../common/delivery-job.ts";
import { createLogger } from "../../common/log.ts";
import { connectRedis } from "../../common/redis.ts";
import { DELIVERY_QUEUE, redisKeys } from "../../common/redis-keys.ts";
import type { DeliveryDecision } from "../../dispatcher/deliver.ts";
import { createDispatcher, type Dispatcher } from "../../dispatcher/worker.ts";
import { startPrivateRedis } from "../../scripts/private-redis.ts";
import { eventually } from "../support/eventually.ts";
import { openTestRedis, type TestRedis } from "../support/redis.ts";

const job = (n: number): DeliveryJob => ({
  tenantId: "t1",
  webhookId: "w1",
  eventId: `m${n}`,
  deliveryId: `d${n}`,
  body: [{ data: { schemaJobs: { operation: "INSERT" } } }],
  committedAt: Date.now(),
});

describe("dispatcher worker", () => {
  let r: TestRedis;
  let queue: Queue;
  let dispatcher: Dispatcher | undefined;
  beforeEach(() => {
    r = openTestRedis();
    queue = new Queue(DELIVERY_QUEUE, { connection: r.redis, prefix: r.keys.bullPrefix });
  });
  afterEach(async () => {
    await dispatcher?.stop(1000);
    await queue.close();
    await r.close();
  });

  const start = (deliver: (job: DeliveryJob, attempt: number) => Promise<DeliveryDecision | undefined>) => {
    dispatcher = createDispatcher({
      redis: r.redis,
      keys: r.keys,
      log: createLogger("silent"),
      concurrency: 4,
      deliver: async (j, context) => (await deliver(j, context.attempt)) ?? { kind: "succeeded" },
      retry: { schedule: [50, 50], jitter: 0 },
    });
    return dispatcher.ready();
  };

  test("hands every valid job to deliver, once per job id", async () => {
    const delivered: DeliveryJob[] = [];
    await start(async (j) => void delivered.push(j));
    for (const n of [1, 2, 3]) await queue.add("deliver", job(n), { jobId: deliveryJobId("w1", `m${n}`) });
    await queue.add("deliver", job(1), { jobId: deliveryJobId("w1", "m1") });
    await eventually(() => expect(delivered.map((d) => d.deliveryId).sort()).toEqual(["d1", "d2", "d3"]));
    await Bun.sleep(50);
    expect(delivered.length).toBe(3);
  });

  test("a job that breaks the contract fails at once and is never delivered", async () => {
    const delivered: DeliveryJob[] = [];
    await start(async (j) => void delivered.push(j));
    const bad = await queue.add("deliver", { tenantId: "t1", body: "not an array" }, { attempts: 5 });
    await eventually(async () => expect(await bad.getState()).toBe("failed"));
    expect((await queue.getJob(bad.id ?? ""))?.attemptsMade).toBe(1);
    expect(delivered).toEqual([]);
  });

  test("stop lets an in-flight delivery finish and takes no new jobs", async () => {
    const finished: string[] = [];
    await start(async (j) => {
      await Bun.sleep(200);
      finished.push(j.deliveryId);
      return undefined;
    });
    await queue.add("deliver", job(1));
    await eventually(async () => expect(await queue.getActiveCount()).toBe(1));
    await dispatcher?.stop(5000);
    dispatcher = undefined;
    expect(finished).toEqual(["d1"]);
    await queue.add("deliver", job(2));
    await Bun.sleep(100);
    expect(await queue.getWaitingCount()).toBe(1);
  });

  test("decisions drive the job: retry spends an attempt, busy does not, failed is final", async () => {
    const seen: string[] = [];
    await start(async (j, attempt) => {
      seen.push(`${j.deliveryId}#${attempt}`);
      if (j.deliveryId === "d1")
        return attempt < 2 ? { kind: "retry", delayMs: 20, reason: "HTTP 500" } : undefined;
      if (j.deliveryId === "d2") return seen.length < 6 ? { kind: "busy", delayMs: 20 } : undefined;
      return { kind: "failed", reason: "gone", disableEndpoint: true };
    });
    // Plain jobs (BullMQ's default of one attempt): the dispatcher's own policy decides.
    const [one, two, three] = await queue.addBulk([1, 2, 3].map((n) => ({ name: "deliver", data: job(n) })));
    await eventually(async () => expect(await one?.getState()).toBe("completed"));
    await eventually(async () => expect(await two?.getState()).toBe("completed"));
    await eventually(async () => expect(await three?.getState()).toBe("failed"));
    expect(seen.filter((s) => s.startsWith("d1"))).toEqual(["d1#1", "d1#2"]);
    expect(new Set(seen.filter((s) => s.startsWith("d2")))).toEqual(new Set(["d2#1"]));
    expect(seen.filter((s) => s.startsWith("d3"))).toEqual(["d3#1"]);
  });

  test("an internal error is retried by the schedule and then fails the job", async () => {
    let calls = 0;
    await start(async () => {
      calls++;
      throw new Error("store unavailable");
    });
    const added = await queue.add("deliver", job(1));
    await eventually(async () => expect(await added.getState()).toBe("failed"));
    expect(calls).toBe(3);
    expect((await queue.getJob(added.id ?? ""))?.failedReason).toBe("internal error: store unavailable");
  });
});

describe("dispatcher worker, Redis away", () => {
  test("each worker's connection reports the outage; it is logged once, and jobs flow again after", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tds-worker-outage-"));
    let server = await startPrivateRedis(dir);
    const redis = connectRedis(server.url, () => undefined);
    const keys = redisKeys("outage");
    const lines: string[] = [];
    const delivered: string[] = [];
    const dispatcher = createDispatcher({
      redis,
      keys,
      log: createLogger("warn", {}, (line) => lines.push(line)),
      concurrency: 8,
      deliver: async (j) => {
        delivered.push(j.deliveryId);
        return { kind: "succeeded" };
      },
      retry: { schedule: [50], jitter: 0 },
    });
    const queue = new Queue(DELIVERY_QUEUE, { connection: redis, prefix: keys.bullPrefix });
    try {
      await dispatcher.ready();
      await server.stop();
      await Bun.sleep(2500);
      server = await startPrivateRedis(dir, server.port);
      await queue.add("deliver", job(1));
      await eventually(() => expect(delivered).toEqual(["d1"]), { timeoutMs: 10_000 });
      const workerErrors = lines.filter((line) => JSON.parse(line).msg === "delivery worker error");
      // Eight workers, each retrying its connection several times a second: one line per distinct message.
      expect(workerErrors.length).toBeGreaterThanOrEqual(1);
      expect(workerErrors.length).toBeLessThanOrEqual(3);
    } finally {
      await dispatcher.stop(1000);
      await queue.close();
      redis.disconnect();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 20_000);
});
