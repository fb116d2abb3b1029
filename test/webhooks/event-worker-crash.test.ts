/**
 * A deferred firing taken by an API process that then dies (SIGKILL) is taken
 * again by another process's event worker within seconds, not after BullMQ's
 * default 30 s lock and 30 s stalled check: the record fires late by the
 * crash, not by a minute.
 */
import { afterAll, expect, test } from "bun:test";
import {
  createWebhookEventQueue,
  createWebhookEventWorker,
  type WebhookEvent,
} from "../../api/feed/webhook-events.ts";
import { createLogger } from "../../common/log.ts";
import { eventually } from "../support/eventually.ts";
import { collect } from "../support/processes.ts";
import { openTestRedis } from "../support/redis.ts";

const redis = openTestRedis();
const queue = createWebhookEventQueue(redis.redis, redis.keys);
const handled: { event: WebhookEvent; at: number }[] = [];
const worker = createWebhookEventWorker({
  redis: redis.redis,
  keys: redis.keys,
  log: createLogger("silent"),
  handle: async (event) => {
    handled.push({ event, at: Date.now() });
  },
});
afterAll(async () => {
  await worker.stop();
  await queue.close();
  await redis.close();
});

test("a firing held by a killed process is handled by another worker within 10 s of the kill", async () => {
  const child = Bun.spawn([process.execPath, "test/webhooks/event-worker-child.ts"], {
    env: { ...process.env, REDIS_PREFIX: redis.prefix },
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = collect(child.stdout);
  await queue.firings.schedule([{ tenantId: "t", webhookId: "w", recordUid: "r1", dueAt: Date.now() }]);
  await eventually(() => expect(out.text()).toContain("taken r1"), { timeoutMs: 10_000 });
  child.kill("SIGKILL");
  await child.exited;
  const killedAt = Date.now();
  worker.start();
  await eventually(() => expect(handled).toHaveLength(1), { timeoutMs: 20_000, intervalMs: 100 });
  expect(handled[0]?.event).toMatchObject({ kind: "deferred", recordUid: "r1" });
  // The held job's lock must lapse and a stalled check find it: 5 s + 2 s now, 30 s + 30 s before.
  expect((handled[0]?.at ?? Number.POSITIVE_INFINITY) - killedAt).toBeLessThan(10_000);
}, 30_000);
