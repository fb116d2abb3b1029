/**
 * The dispatcher process: configuration in, a worker delivering webhook jobs
 * out. Stops taking jobs on SIGTERM/SIGINT, lets in-flight deliveries finish
 * within the grace period, hands the rest back to the queue, exits.
 */
import { ConfigError } from "../common/errors.ts";
import { createLogger, describeError } from "../common/log.ts";
import { connectRedis } from "../common/redis.ts";
import { loadDispatcherConfig } from "./config.ts";
import { openDispatcher } from "./open-dispatcher.ts";

async function main(): Promise<void> {
  const config = loadDispatcherConfig(process.env);
  const log = createLogger(config.LOG_LEVEL, { process: "dispatcher" });
  const redis = connectRedis(config.REDIS_URL, (error) =>
    log.warn("redis connection error", describeError(error)),
  );
  const dispatcher = openDispatcher(config, { redis, log });
  await dispatcher.ready();
  console.log("Dispatcher consuming deliveries");

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { signal });
    await dispatcher.close(config.SHUTDOWN_GRACE_MS);
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
