/** The resolvers a tenant's schema is built with: queries (reads) and mutations (writes) over the store. */
import type { Catalogue } from "../model/catalogue.ts";
import type { Store } from "../store/store.ts";
import { mutationsResolver, operationResultResolver } from "./mutations/mutation-resolvers.ts";
import type { QueryLimits } from "./queries/page-args.ts";
import { createQueryResolvers } from "./queries/query-resolvers.ts";
import type { SchemaResolvers } from "./schema/build-schema.ts";

export function tenantResolvers(
  store: Store,
  catalogue: Catalogue,
  limits: QueryLimits,
  onCommitted: (tenantId: string) => void,
): SchemaResolvers {
  const queries = createQueryResolvers(store, catalogue, limits);
  return {
    list: queries.list,
    byId: queries.byId,
    lookup: queries.lookup,
    reverse: queries.reverse,
    mutations: mutationsResolver(store, catalogue, onCommitted),
    operationResult: operationResultResolver,
  };
}
