/**
 * The baselines: a bare BullMQ Worker that POSTs each delivery job's body to
 * its webhook's URL with fetch — no validation, signing, limiter or retry
 * policy. With LOG_FILE set, the durable baseline: the same, and each
 * delivery's row written into that SQLite file (durable-rows.ts: the
 * service's connection settings, rows of one event-loop turn committed
 * together) before its job completes. With LOG_PHASES=2 as well, the two-phase
 * durable baseline: the row committed, marked in flight, before the request
 * leaves, then filled in with the answer, as the dispatcher's log does.
 * Environment: REDIS_URL, BULL_PREFIX, CONCURRENCY, URLS (JSON: webhook id →
 * URL), LOG_FILE and LOG_PHASES (optional). Prints a line once taking jobs;
 * exits on SIGTERM.
 */
import { Worker } from "bullmq";
import { connectRedis } from "../../common/redis.ts";
import { DELIVERY_QUEUE } from "../../common/redis-keys.ts";
import { openDurableRows } from "./durable-rows.ts";

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is unset`);
  return value;
};
const urls = JSON.parse(env("URLS")) as Record<string, string>;
const redis = connectRedis(env("REDIS_URL"), () => undefined);
const log = process.env.LOG_FILE ? openDurableRows(process.env.LOG_FILE) : null;
const twoPhases = process.env.LOG_PHASES === "2";

const worker = new Worker(
  DELIVERY_QUEUE,
  async (job) => {
    const startedAt = Date.now();
    const { deliveryId, webhookId } = job.data;
    if (twoPhases) await log?.start({ deliveryId, webhookId, startedAt });
    const response = await fetch(urls[webhookId] ?? "", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(job.data.body),
    });
    const answer = await response.text();
    const row = {
      deliveryId,
      webhookId,
      statusCode: response.status,
      responseBody: answer.slice(0, 1024),
      startedAt,
      durationMs: Date.now() - startedAt,
    };
    await (twoPhases ? log?.finish(row) : log?.write(row));
  },
  { connection: redis, prefix: env("BULL_PREFIX"), concurrency: Number(env("CONCURRENCY")) },
);
await worker.waitUntilReady();
console.log(log ? "Durable worker consuming deliveries" : "Bare worker consuming deliveries");
process.on("SIGTERM", () => {
  void worker
    .close(true)
    .then(() => log?.close())
    .finally(() => process.exit(0));
});
