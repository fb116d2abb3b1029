/**
 * The API process: configuration in, a listening HTTP server out. Opens the
 * store and Redis, provisions the `default` tenant on an empty store, listens,
 * and shuts down cleanly on SIGTERM/SIGINT.
 */
import type { Server } from "bun";
import { readBuildInfo } from "../common/build-info.ts";
import { ConfigError } from "../common/errors.ts";
import { createLogger, describeError } from "../common/log.ts";
import { createMetricsRegistry } from "../common/metrics.ts";
import { connectRedis } from "../common/redis.ts";

import { provisionTenant } from "./admin/provision-tenant.ts";
import { loadApiConfig } from "./config.ts";
import { serverOptions } from "./http/server-options.ts";
import { createApiRuntime } from "./runtime.ts";
import { openCoreServices } from "./services.ts";

async function main(): Promise<void> {
  const config = loadApiConfig(process.env);
  const log = createLogger(config.LOG_LEVEL, { process: "api" });
  const services = await openCoreServices(config);
  const { store, catalogues } = services;
  const redis = connectRedis(config.REDIS_URL, (error) =>
    log.warn("redis connection error", describeError(error)),
  );

  const tenants = await store.listTenants();
  // Standard objects may have gained fields since the last start: give every tenant's storage them.
  for (const tenant of tenants) await catalogues.ensureStandardStorage(tenant.id);
  if (tenants.length === 0) {
    const { token } = await provisionTenant(services, { tenantName: "default" });
    console.log(
      `Administrator token for tenant 'default' (shown once, keep it like a password):\n${token.token}`,
    );
  } else {
    console.log(
      "An administrator token is printed on the first start only; to mint another: npm run admin -- mint-token --tenant default --user admin",
    );
  }

  const metrics = createMetricsRegistry({ build: readBuildInfo(config.GIT_COMMIT) });
  const { app, feed, events, retention, live, stop } = createApiRuntime(
    config,
    services,
    redis,
    log,
    metrics,
  );

  try {
    app.listen(serverOptions(config));
  } catch (error) {
    const inUse = (error as NodeJS.ErrnoException).code === "EADDRINUSE";
    throw inUse
      ? new ConfigError([`PORT: ${config.HOST}:${config.PORT} is already in use; choose another PORT`])
      : error;
  }
  const base = `http://${config.HOST}:${app.server?.port}`;
  console.log(
    `API listening on ${base} (browser console: ${base}/console, API description: ${base}/openapi)`,
  );
  feed.start();
  events.start();
  retention.start();
  live.start();

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { signal });
    await drainRequests(app.server, config.SHUTDOWN_GRACE_MS);
    // Live sockets are told to go (1001) before the server closes them without a word.
    live.shutdown();
    await app.stop(true);
    await stop();
    await redis.quit().catch(() => undefined);
    await store.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

/**
 * Stops accepting connections, then waits (at most `graceMs`) for in-flight
 * requests. Idle keep-alive connections do not count: they are closed after.
 */
async function drainRequests(server: Server<unknown> | null, graceMs: number): Promise<void> {
  if (!server) return;
  void server.stop(false);
  const deadline = Date.now() + graceMs;
  while (server.pendingRequests > 0 && Date.now() < deadline) await Bun.sleep(10);
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? `api: ${error.message}` : error);
  process.exit(1);
});
