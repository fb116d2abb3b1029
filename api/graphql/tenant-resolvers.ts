/** The resolvers a tenant's schema is built with: queries (reads) and mutations (writes) over the store. */
import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Store } from "../store/store.ts";
import { mutationsResolver, operationResultResolver } from "./mutations/mutation-resolvers.ts";
import type { SchemaResolvers } from "./schema/build-schema.ts";

export function tenantResolvers(store: Store, catalogue: Catalogue): SchemaResolvers {
  return {
    mutations: mutationsResolver(store, catalogue),
    operationResult: operationResultResolver,
  };
}
