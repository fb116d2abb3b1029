/**
 * Everything the API process runs, assembled from its services and Redis:
 * the tenants' schemas, the delivery queue, the change feed (a tailer woken by
 * local commits, feeding the webhook and deferred-webhook consumers), the webhook event worker (schedule
 * ticks, deferred firings), the retention sweeper, the request-rate limiter and the HTTP app. main.ts listens and starts
 * the feed and the sweeper; tests and benchmarks assemble the same thing. Every part's metrics go
 * on `metrics` (main.ts passes the process's registry; by default a bare one of the runtime's own).
 */
import type Redis from "ioredis";
import type { Logger } from "../common/log.ts";
import { createMetricsRegistry, type Registry } from "../common/metrics.ts";
import { redisKeys } from "../common/redis-keys.ts";
import { createApp } from "./app.ts";
import { countRefusals } from "./auth/rate-limit-metrics.ts";
import { rateLimitRules } from "./auth/rate-limiter.ts";
import { createRedisRateLimiter } from "./auth/redis-rate-limiter.ts";
import type { ApiConfig } from "./config.ts";
import { createBullDeliveryQueue } from "./feed/bull-delivery-queue.ts";
import { createCommitSignal } from "./feed/commit-signal.ts";
import { createDeferredConsumer } from "./feed/deferred-consumer.ts";
import { createLease } from "./feed/feed-lease.ts";
import { registerFeedMetrics } from "./feed/feed-metrics.ts";
import { createFeedTailer } from "./feed/feed-tailer.ts";
import { createWebhookEventHandler } from "./feed/fire-webhook-event.ts";
import { createWebhookConsumer } from "./feed/webhook-consumer.ts";
import { createWebhookEventQueue, createWebhookEventWorker } from "./feed/webhook-events.ts";
import { createGraphQLService } from "./graphql/graphql-service.ts";
import { createTenantSchemas, documentLimits } from "./graphql/tenant-schemas.ts";
import { createRetentionSweeper } from "./retention/retention-sweeper.ts";
import type { CoreServices } from "./services.ts";
import { firingWebhookOf } from "./webhooks/deferred-reader.ts";
import { createWebhookCompiler } from "./webhooks/webhook-compiler.ts";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export function createApiRuntime(
  config: Readonly<ApiConfig>,
  services: CoreServices,
  redis: Redis,
  log: Logger,
  metrics: Registry = createMetricsRegistry(),
) {
  const { store, catalogues } = services;
  const keys = redisKeys(config.REDIS_PREFIX);
  const commits = createCommitSignal();
  const schemas = createTenantSchemas(store, config, commits.notify);
  const deliveryQueue = createBullDeliveryQueue(redis, keys);
  const compiler = createWebhookCompiler(
    store,
    catalogues,
    schemas,
    log,
    config.DEFERRED_WEBHOOKS_MIN_OFFSET_MS,
  );
  const webhooks = createWebhookConsumer({
    store,
    catalogues,
    compiler,
    enqueue: (jobs) => deliveryQueue.enqueue(jobs),
    log,
    maxBodyBytes: config.DELIVERY_MAX_BODY_BYTES,
  });
  const eventQueue = createWebhookEventQueue(redis, keys);
  const deferred = createDeferredConsumer({
    deferredForTenant: (tenantId) => compiler.deferredForTenant(tenantId),
    firings: eventQueue.firings,
  });
  // Firings read their record as a query answers it: a GraphQL service of their own (no metrics, no store reads).
  const firingGraphQL = createGraphQLService(catalogues, schemas, documentLimits(config), log, {
    jit: false,
  });
  const events = createWebhookEventWorker({
    redis,
    keys,
    log,
    handle: createWebhookEventHandler({
      store,
      enqueue: (jobs) => deliveryQueue.enqueue(jobs),
      schedules: eventQueue.schedules,
      log,
      async deferredWebhook(tenantId, webhookId) {
        const found = (await compiler.deferredForTenant(tenantId)).find((w) => w.webhookId === webhookId);
        return found ? firingWebhookOf(tenantId, found, firingGraphQL) : null;
      },
    }),
  });
  const feed = createFeedTailer({
    store,
    lease: createLease(redis, keys.feedLease, config.FEED_LEASE_MS),
    consumers: [webhooks, deferred],
    log,
    batchSize: config.FEED_BATCH_SIZE,
    idleMs: config.FEED_POLL_MS,
  });
  commits.listen(feed.notify);
  registerFeedMetrics(metrics, () => feed.lag());
  const retention = createRetentionSweeper({
    store,
    log,
    rules: {
      deliveryLogMs: config.DELIVERY_LOG_RETENTION_DAYS * DAY_MS,
      changeLogMs: config.CHANGE_LOG_RETENTION_HOURS * HOUR_MS,
    },
    everyMs: config.RETENTION_SWEEP_MS,
  });
  const rateLimiter = countRefusals(
    createRedisRateLimiter({ redis, keys, rules: rateLimitRules(config), log }),
    metrics,
  );
  const app = createApp({
    config,
    redis,
    log,
    schemas,
    deliveryQueue,
    schedules: eventQueue.schedules,
    rateLimiter,
    metrics,
    ...services,
  });
  return {
    app,
    metrics,
    feed,
    retention,
    schemas,
    deliveryQueue,
    /** The worker of schedule ticks and deferred firings (main.ts starts it with the feed). */
    events,
    /** Stops the feed, the event worker and the sweeper and closes the queues (the caller closes Redis and the store). */
    async stop(): Promise<void> {
      await Promise.all([feed.stop(), retention.stop(), events.stop()]);
      // Redis may be away at shutdown: do not wait on it forever.
      const queues = Promise.all([deliveryQueue.close(), eventQueue.close()]).catch(() => undefined);
      await Promise.race([queues, Bun.sleep(1000)]);
    },
  };
}
