/**
 * The baseline: a bare BullMQ Worker that POSTs each delivery job's body to
 * its webhook's URL with fetch — no validation, signing, store, limiter or
 * retry policy. Environment: REDIS_URL, BULL_PREFIX, CONCURRENCY, URLS (JSON:
 * webhook id → URL). Prints a line once taking jobs; exits on SIGTERM.
 */
import { Worker } from "bullmq";
import { connectRedis } from "../../common/redis.ts";
import { DELIVERY_QUEUE } from "../../common/redis-keys.ts";

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is unset`);
  return value;
};
const urls = JSON.parse(env("URLS")) as Record<string, string>;
const redis = connectRedis(env("REDIS_URL"), () => undefined);

const worker = new Worker(
  DELIVERY_QUEUE,
  async (job) => {
    const response = await fetch(urls[job.data.webhookId] ?? "", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(job.data.body),
    });
    await response.text();
  },
  { connection: redis, prefix: env("BULL_PREFIX"), concurrency: Number(env("CONCURRENCY")) },
);
await worker.waitUntilReady();
console.log("Bare worker consuming deliveries");
process.on("SIGTERM", () => {
  void worker.close(true).finally(() => process.exit(0));
});
