/**
 * The dispatcher process: configuration in, a worker delivering webhook jobs
 * out, and its operations listener (metrics, health) on DISPATCHER_PORT. Stops
 * taking jobs on SIGTERM/SIGINT, lets in-flight deliveries finish within the
 * grace period, hands the rest back to the queue, exits.
 */
import type { Server } from "bun";
import { readBuildInfo } from "../common/build-info.ts";
import { ConfigError } from "../common/errors.ts";
import { createLogger, describeError } from "../common/log.ts";
import { createMetricsRegistry } from "../common/metrics.ts";
import { connectRedis, isRedisReachable } from "../common/redis.ts";
import { type DispatcherConfig, loadDispatcherConfig } from "./config.ts";
import { type OpenDispatcher, openDispatcher } from "./open-dispatcher.ts";
import { createOpsHandler, type OpsServerDeps } from "./ops-server.ts";

async function main(): Promise<void> {
  const config = loadDispatcherConfig(process.env);
  const log = createLogger(config.LOG_LEVEL, { process: "dispatcher" });
  const redis = connectRedis(config.REDIS_URL, (error) =>
    log.warn("redis connection error", describeError(error)),
  );
  const metrics = createMetricsRegistry({ build: readBuildInfo(config.GIT_COMMIT) });
  let dispatcher: OpenDispatcher | null = null;
  // Listening first: a taken port stops the process before it takes a job. /readyz says 503 until
  // the workers take jobs, /healthz answers at once.
  const server = listen(config, {
    metrics,
    metricsToken: config.METRICS_TOKEN,
    readiness: {
      workers: async () => dispatcher?.isTakingJobs() ?? false,
      redis: () => isRedisReachable(redis),
    },
  });
  dispatcher = await openDispatcher(config, { redis, log, metrics });
  await dispatcher.ready();
  console.log("Dispatcher consuming deliveries");

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { signal });
    await dispatcher?.close(config.SHUTDOWN_GRACE_MS);
    await server?.stop(true);
    await redis.quit().catch(() => undefined);
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

/** Serves the operations listener on DISPATCHER_PORT (none when 0). @throws ConfigError when the port is taken. */
function listen(config: Readonly<DispatcherConfig>, deps: OpsServerDeps): Server<undefined> | null {
  if (config.DISPATCHER_PORT === 0) return null;
  try {
    const server = Bun.serve({
      port: config.DISPATCHER_PORT,
      hostname: config.DISPATCHER_HOST,
      fetch: createOpsHandler(deps),
    });
    console.log(`Dispatcher operations on http://${config.DISPATCHER_HOST}:${server.port}`);
    return server;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    const where = `${config.DISPATCHER_HOST}:${config.DISPATCHER_PORT}`;
    throw new ConfigError([
      `DISPATCHER_PORT: ${where} is already in use; choose another DISPATCHER_PORT (0: no listener)`,
    ]);
  }
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? `dispatcher: ${error.message}` : error);
  process.exit(1);
});
