/**
 * Builds the HTTP application from its dependencies (services, Redis, the
 * delivery queue, config, logger). Never listens: main.ts does, tests call
 * `app.handle(request)`.
 */
import { Elysia } from "elysia";
import type Redis from "ioredis";
import { readBuildInfo } from "../common/build-info.ts";
import type { Logger } from "../common/log.ts";
import type { Registry } from "../common/metrics.ts";
import { isRedisReachable } from "../common/redis.ts";
import { currentRequestId } from "../common/request-context.ts";
import { authRoutes } from "./auth/auth-routes.ts";
import { withRateLimits } from "./auth/auth-service.ts";
import type { RateLimiter } from "./auth/rate-limiter.ts";
import { customRoutes } from "./catalogue/custom-routes.ts";
import type { ApiConfig } from "./config.ts";
import { configVarRoutes } from "./config-vars/config-var-routes.ts";
import { consoleRoutes } from "./console/console-routes.ts";
import type { DeliveryQueuePort } from "./feed/delivery-queue-port.ts";
import { redeliveryJobs } from "./feed/redelivery-jobs.ts";
import type { WebhookSchedules } from "./feed/webhook-events.ts";
import { instrumentGraphQL } from "./graphql/graphql-metrics.ts";
import { graphqlRoutes } from "./graphql/graphql-routes.ts";
import { createGraphQLService } from "./graphql/graphql-service.ts";
import { createPersistedQueryStore } from "./graphql/persisted-queries.ts";
import { createReadAnswers } from "./graphql/queries/read-answers.ts";
import type { SchemaCache } from "./graphql/schema/schema-cache.ts";
import { documentLimits } from "./graphql/tenant-schemas.ts";
import { corsPolicy } from "./http/cors.ts";
import { corsPlugin } from "./http/cors-plugin.ts";
import { errorPlugin } from "./http/error-plugin.ts";
import { healthRoutes } from "./http/health-routes.ts";
import { createHttpMetrics } from "./http/http-metrics.ts";
import { metricsRoutes } from "./http/metrics-routes.ts";
import { openapiRoutes } from "./http/openapi-routes.ts";
import { requestContextPlugin } from "./http/request-context-plugin.ts";
import type { RouteEntry } from "./http/route-table.ts";
import { upgradeGuard } from "./http/upgrade-guard.ts";
import { liveRoutes } from "./live/live-routes.ts";
import type { LiveService } from "./live/live-service.ts";
import type { CoreServices } from "./services.ts";
import { webhookRoutes } from "./webhooks/webhook-routes.ts";
import { createWebhookService } from "./webhooks/webhook-service.ts";

export interface AppDeps extends CoreServices {
  config: Readonly<ApiConfig>;
  schemas: SchemaCache;
  redis: Redis;
  deliveryQueue: DeliveryQueuePort;
  /** The schedulers of scheduled webhooks (api/feed/webhook-events.ts). */
  schedules: WebhookSchedules;
  /** Per-token and per-tenant request rates, asked once per authenticated request. */
  rateLimiter: RateLimiter;
  log: Logger;
  /** The process's metrics registry: the app's families go on it, `GET /metrics` renders it. */
  metrics: Registry;
  /** Live subscriptions: the WebSocket endpoint `/graphql/subscriptions`. */
  live: LiveService;
}

const API_INFO = {
  title: "Tenant data service",
  version: "0.1.0",
  description:
    "REST endpoints of the multi-tenant data service; GraphQL is served at /graphql/graphql (its schema at /graphql/schema).",
};

export function createApp({
  config,
  store,
  redis,
  auth,
  catalogues,
  configVars,
  box,
  schemas,
  deliveryQueue,
  schedules,
  rateLimiter,
  log,
  metrics,
  live,
}: AppDeps) {
  const limits = documentLimits(config);
  const reads =
    config.GRAPHQL_STORE_READS && store.readJson
      ? createReadAnswers(store.readJson.bind(store), limits, log)
      : null;
  const graphql = instrumentGraphQL(
    createGraphQLService(catalogues, schemas, limits, log, {
      reads,
      documentCacheBytes: config.GRAPHQL_DOCUMENT_CACHE_BYTES,
    }),
    metrics,
  );
  const persisted = createPersistedQueryStore({
    tenantBytes: config.GRAPHQL_PERSISTED_QUERIES_TENANT_BYTES,
    totalBytes: config.GRAPHQL_PERSISTED_QUERIES_TOTAL_BYTES,
  });
  const webhooks = createWebhookService({
    store,
    catalogues,
    schemas,
    box,
    allowHttp: config.WEBHOOKS_ALLOW_HTTP,
    maxSelectionFields: config.WEBHOOK_MAX_SELECTION_FIELDS,
    redeliver: (deliveries) => deliveryQueue.requeue(redeliveryJobs(deliveries, currentRequestId())),
    schedules,
    log,
    minDeferredOffsetMs: config.DEFERRED_WEBHOOKS_MIN_OFFSET_MS,
    allowCronSeconds: config.SCHEDULED_WEBHOOKS_ALLOW_SECONDS,
  });
  // Every route authenticates through this one service, so every authenticated request is counted.
  const limited = withRateLimits(auth, rateLimiter);
  // The edge reads the finished app's routes at request time: 405 answers, OPTIONS, upgrades.
  const routes = (): readonly (RouteEntry & { hooks?: { detail?: unknown } })[] => app.routes;
  const app = new Elysia()
    .use(requestContextPlugin(log, createHttpMetrics(metrics)))
    .onRequest(() => store.requestArrived())
    .use(corsPlugin(corsPolicy(config.CORS_ORIGINS), routes))
    .use(upgradeGuard(routes))
    .use(errorPlugin(log, config.MAX_BODY_BYTES, routes))
    .use(openapiRoutes(API_INFO, routes))
    .use(
      healthRoutes({ store: () => store.ping(), redis: () => isRedisReachable(redis) }, () =>
        readBuildInfo(config.GIT_COMMIT),
      ),
    )
    .use(metricsRoutes(metrics, config.METRICS_TOKEN))
    .use(consoleRoutes())
    .use(authRoutes(limited))
    .use(customRoutes(limited, catalogues))
    .use(configVarRoutes(limited, configVars))
    .use(graphqlRoutes(limited, graphql, { persisted, maxBatch: config.GRAPHQL_MAX_BATCH }))
    .use(webhookRoutes(limited, webhooks))
    .use(liveRoutes(live));
  return app;
}
