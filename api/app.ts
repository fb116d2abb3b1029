/**
 * Builds the HTTP application from its dependencies (store, Redis, config,
 * logger). Never listens: main.ts does, tests call `app.handle(request)`.
 */
import { Elysia } from "elysia";
import type Redis from "ioredis";
import type { Logger } from "../common/log.ts";
import { isRedisReachable } from "../common/redis.ts";
import { authRoutes } from "./auth/auth-routes.ts";
import type { AuthService } from "./auth/auth-service.ts";
import type { CatalogueService } from "./catalogue/catalogue-service.ts";
import { customRoutes } from "./catalogue/custom-routes.ts";
import type { ApiConfig } from "./config.ts";
import { configVarRoutes } from "./config-vars/config-var-routes.ts";
import type { ConfigVarService } from "./config-vars/config-var-service.ts";
import { graphqlRoutes } from "./graphql/graphql-routes.ts";
import { createGraphQLService } from "./graphql/graphql-service.ts";
import { buildTenantSchema } from "./graphql/schema/build-schema.ts";
import { createSchemaCache } from "./graphql/schema/schema-cache.ts";
import { tenantResolvers } from "./graphql/tenant-resolvers.ts";
import { errorPlugin } from "./http/error-plugin.ts";
import { healthRoutes } from "./http/health-routes.ts";
import type { Store } from "./store/store.ts";

export interface AppDeps {
  config: Readonly<ApiConfig>;
  store: Store;
  redis: Redis;
  auth: AuthService;
  catalogues: CatalogueService;
  configVars: ConfigVarService;
  log: Logger;
}

export function createApp({ config, store, redis, auth, catalogues, configVars, log }: AppDeps) {
  const limits = {
    maxPageSize: config.GRAPHQL_MAX_PAGE_SIZE,
    defaultRelatedLimit: 20,
    maxRelatedLimit: config.GRAPHQL_MAX_RELATED_LIMIT,
  };
  const schemas = createSchemaCache(
    (catalogue) => buildTenantSchema(catalogue, tenantResolvers(store, catalogue, limits)),
    config.TENANT_CACHE_SIZE,
  );
  const graphql = createGraphQLService(
    catalogues,
    schemas,
    {
      ...limits,
      maxDepth: config.GRAPHQL_MAX_DEPTH,
      maxCost: config.GRAPHQL_MAX_COST,
      maxAliases: config.GRAPHQL_MAX_ALIASES,
    },
    log,
  );
  return new Elysia()
    .use(errorPlugin(log, config.MAX_BODY_BYTES))
    .use(healthRoutes({ store: () => store.ping(), redis: () => isRedisReachable(redis) }))
    .use(authRoutes(auth))
    .use(customRoutes(auth, catalogues))
    .use(configVarRoutes(auth, configVars))
    .use(graphqlRoutes(auth, graphql));
}

export type App = ReturnType<typeof createApp>;
