/**
 * Everything the API process runs, assembled from its services and Redis:
 * the tenants' schemas, the delivery queue, the change feed (a reader per partition this process
 * holds, woken by commits, feeding the webhook, deferred-webhook and live consumers), the webhook event worker
 * (schedule ticks, deferred firings), the retention sweeper, the request-rate limiter, live subscriptions
 * and the HTTP app. main.ts listens and starts the feed, the event worker, the sweeper and the live
 * service; tests and benchmarks assemble the same thing. Every part's metrics go
 * on `metrics` (main.ts passes the process's registry; by default a bare one of the runtime's own).
 */
import type Redis from "ioredis";
import { describeError, type Logger } from "../common/log.ts";
import { createMetricsRegistry, type Registry } from "../common/metrics.ts";
import { redisKeys } from "../common/redis-keys.ts";
import { createApp } from "./app.ts";
import { withRevocationNotices } from "./auth/auth-service.ts";
import { countRefusals } from "./auth/rate-limit-metrics.ts";
import { rateLimitRules } from "./auth/rate-limiter.ts";
import { createRedisRateLimiter } from "./auth/redis-rate-limiter.ts";
import { createRevocationBroadcast } from "./auth/revocation-broadcast.ts";
import type { ApiConfig } from "./config.ts";
import { createBullDeliveryQueue } from "./feed/bull-delivery-queue.ts";
import { createCommitBroadcast } from "./feed/commit-broadcast.ts";
import { createDeferredConsumer } from "./feed/deferred-consumer.ts";
import { registerFeedMetrics } from "./feed/feed-metrics.ts";
import { createWebhookEventHandler } from "./feed/fire-webhook-event.ts";
import { createLiveConsumer } from "./feed/live-consumer.ts";
import { createPartitionedFeed } from "./feed/partitioned-feed.ts";
import { createWebhookConsumer } from "./feed/webhook-consumer.ts";
import { createWebhookEventQueue, createWebhookEventWorker } from "./feed/webhook-events.ts";
import { createGraphQLService } from "./graphql/graphql-service.ts";
import { createTenantSchemas, documentLimits } from "./graphql/tenant-schemas.ts";
import { createLiveAudience } from "./live/live-audience.ts";
import { createLiveFanout } from "./live/live-fanout.ts";
import { createLiveService } from "./live/live-service.ts";
import { createRetentionSweeper } from "./retention/retention-sweeper.ts";
import type { CoreServices } from "./services.ts";
import { partitionOfTenant } from "./store/feed-partitions.ts";
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
  // Pub/sub needs a connection of its own: in subscriber mode it can send nothing else.
  // A duplicate takes none of the original's listeners: without its own, its errors go unhandled.
  const subscriber = redis.duplicate();
  subscriber.on("error", (error) => log.warn("redis subscriber connection error", describeError(error)));
  const commits = createCommitBroadcast({
    publisher: redis,
    subscriber,
    channel: keys.feedCommits,
    onError: (error) => log.debug("commit hint not published", describeError(error)),
  });
  commits
    .start()
    .catch((error) => log.warn("commit hints from other processes not subscribed", describeError(error)));
  const revocations = createRevocationBroadcast({
    publisher: redis,
    subscriber,
    channel: keys.tokenRevocations,
    ackChannel: keys.tokenRevocationAcks,
    onRevoked: (tenantId, jti) => services.auth.forgetToken(tenantId, jti),
    onSubscribed: () => services.auth.forgetAllTokens(),
  });
  revocations
    .start()
    .catch((error) => log.warn("token revocations of other processes not subscribed", describeError(error)));
  // Who listens live where: the feed publishes a tenant's changes only when some process will hear them.
  const audience = createLiveAudience({
    publisher: redis,
    subscriber,
    channel: keys.liveAudience,
    ackChannel: keys.liveAudienceAcks,
    refreshMs: config.LIVE_AUDIENCE_REFRESH_MS,
  });
  audience
    .start()
    .catch((error) => log.warn("live audience of other processes not subscribed", describeError(error)));
  // A revocation returns once every process has dropped the token; one that did not answer (or all,
  // without Redis) sees it within TOKEN_REVOCATION_CHECK_MS.
  const auth = withRevocationNotices(services.auth, (tenantId, jti) =>
    revocations.publish(tenantId, jti).then(
      ({ told, acknowledged }) => {
        if (acknowledged < told)
          log.warn(
            "token revocation not acknowledged by every API process: those see it within TOKEN_REVOCATION_CHECK_MS",
            {
              tenantId,
              jti,
              told,
              acknowledged,
            },
          );
      },
      (error) =>
        log.warn(
          "token revocation not published: the other API processes see it within TOKEN_REVOCATION_CHECK_MS",
          {
            tenantId,
            jti,
            ...describeError(error),
          },
        ),
    ),
  );
  const partitions = store.feedPartitions();
  const schemas = createTenantSchemas(store, config, (tenantId) =>
    commits.notify(partitionOfTenant(tenantId, partitions)),
  );
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
  // One reader per partition of the change log, spread over the live API processes by Redis leases.
  const feed = createPartitionedFeed({
    store,
    redis,
    keys,
    // Webhooks first: a live subscriber is never told of a change before its webhooks are logged.
    // Live last: a batch handed again after a later consumer failed would publish its changes twice.
    consumers: [
      webhooks,
      deferred,
      createLiveConsumer({
        heard: (tenantIds) => audience.heard(tenantIds),
        publish: async (tenantId, message) => {
          await redis.publish(keys.liveChannel(tenantId), message);
        },
      }),
    ],
    log,
    leaseMs: config.FEED_LEASE_MS,
    batchSize: config.FEED_BATCH_SIZE,
    idleMs: config.FEED_POLL_MS,
  });
  commits.listen(feed.notify, feed.reads);
  // Another process's commits too, where the engine hears them (PostgreSQL's NOTIFY); polling stays the net.
  const stopHearing = store.onCommitted?.(feed.notify);
  registerFeedMetrics(metrics, { lag: feed.lag, held: feed.held, partitions });
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
  const live = createLiveService({
    store,
    auth,
    catalogues,
    schemas,
    fanout: createLiveFanout({ subscriber, audience, keys, store, catalogues, log }),
    settings: {
      maxConnectionsPerToken: config.LIVE_MAX_CONNECTIONS_PER_TOKEN,
      maxSubscriptionsPerConnection: config.LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION,
      maxBufferedBytes: config.LIVE_MAX_BUFFERED_BYTES,
      initTimeoutMs: config.LIVE_INIT_TIMEOUT_MS,
      keepAliveMs: config.LIVE_KEEP_ALIVE_MS,
      authRecheckMs: config.LIVE_AUTH_RECHECK_MS,
      maxSelectionFields: config.WEBHOOK_MAX_SELECTION_FIELDS,
    },
    log,
    metrics,
  });
  const app = createApp({
    config,
    redis,
    log,
    schemas,
    deliveryQueue,
    schedules: eventQueue.schedules,
    rateLimiter,
    metrics,
    live,
    ...services,
    auth,
  });
  return {
    app,
    metrics,
    feed,
    retention,
    schemas,
    deliveryQueue,
    live,
    /** The worker of schedule ticks and deferred firings (main.ts starts it with the feed). */
    events,
    /**
     * Stops the feed, the event worker, the sweeper and the live subscriptions and closes the queues
     * (the caller closes Redis and the store).
     */
    async stop(): Promise<void> {
      live.shutdown();
      stopHearing?.();
      await Promise.all([feed.stop(), retention.stop(), events.stop()]);
      audience.stop();
      subscriber.disconnect();
      // Redis may be away at shutdown: do not wait on it forever.
      const queues = Promise.all([deliveryQueue.close(), eventQueue.close()]).catch(() => undefined);
      await Promise.race([queues, Bun.sleep(1000)]);
    },
  };
}
