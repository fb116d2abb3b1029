/**
 * The tenants' executable GraphQL schemas: built from each catalogue with the
 * query and mutation resolvers over the store, cached per catalogue version.
 * Shared by the HTTP routes and the change feed (which compiles webhook
 * subscriptions against the same schema).
 */
import type { ApiConfig } from "../config.ts";
import type { Store } from "../store/store.ts";
import type { DocumentLimits } from "./document-limits.ts";
import { buildTenantSchema } from "./schema/build-schema.ts";
import { createSchemaCache, type SchemaCache } from "./schema/schema-cache.ts";
import { tenantResolvers } from "./tenant-resolvers.ts";

type LimitsConfig = Pick<
  ApiConfig,
  | "GRAPHQL_MAX_PAGE_SIZE"
  | "GRAPHQL_MAX_RELATED_LIMIT"
  | "GRAPHQL_MAX_DEPTH"
  | "GRAPHQL_MAX_COST"
  | "GRAPHQL_MAX_ALIASES"
  | "GRAPHQL_MAX_OFFSET"
  | "GRAPHQL_MAX_SCANS"
>;

/** The limits of SPEC.md §9 as configured. */
export function documentLimits(config: Readonly<LimitsConfig>): DocumentLimits {
  return {
    maxPageSize: config.GRAPHQL_MAX_PAGE_SIZE,
    maxOffset: config.GRAPHQL_MAX_OFFSET,
    defaultRelatedLimit: 20,
    maxRelatedLimit: config.GRAPHQL_MAX_RELATED_LIMIT,
    maxDepth: config.GRAPHQL_MAX_DEPTH,
    maxCost: config.GRAPHQL_MAX_COST,
    maxAliases: config.GRAPHQL_MAX_ALIASES,
    maxScans: config.GRAPHQL_MAX_SCANS,
  };
}

/** @param onCommitted called with the tenant after every committed mutation (the change feed listens). */
export function createTenantSchemas(
  store: Store,
  config: Readonly<LimitsConfig & Pick<ApiConfig, "TENANT_CACHE_SIZE">>,
  onCommitted: (tenantId: string) => void,
): SchemaCache {
  const limits = documentLimits(config);
  return createSchemaCache(
    (catalogue) => buildTenantSchema(catalogue, tenantResolvers(store, catalogue, limits, onCommitted)),
    config.TENANT_CACHE_SIZE,
  );
}
