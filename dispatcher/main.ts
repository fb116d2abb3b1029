/**
 * The dispatcher process: configuration in, a worker consuming delivery jobs
 * out. Stops taking jobs on SIGTERM/SIGINT, lets in-flight ones finish within
 * the grace period, exits.
 */
import { ConfigError } from "../common/errors.ts";
import { createLogger, describeError } from "../common/log.ts";
import { connectRedis } from "../common/redis.ts";
import { redisKeys } from "../common/redis-keys.ts";
import { loadDispatcherConfig } from "./config.ts";
import { createDispatcher } from "./worker.ts";

async function main(): Promise<void> {
  const config = loadDispatcherConfig(process.env);
  const log = createLogger(config.LOG_LEVEL, { process: "dispatcher" });
  const redis = connectRedis(config.REDIS_URL, (error) =>
    log.warn("redis connection error", describeError(error)),
  );
  const dispatcher = createDispatcher({
    redis,
    keys: redisKeys(config.REDIS_PREFIX),
    log,
    concurrency: config.DISPATCH_CONCURRENCY,
    // Signing, POSTing and retry classification arrive with the delivery work (issue 8).
    deliver: async (job) =>
      log.info("delivery received", { tenantId: job.tenantId, webhookId: job.webhookId }),
  });
  await dispatcher.ready();
  console.log("Dispatcher consuming deliveries");

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { signal });
    await dispatcher.stop(config.SHUTDOWN_GRACE_MS);
    await redis.quit().catch(() => undefined);
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? `dispatcher: ${error.message}` : error);
  process.exit(1);
});
