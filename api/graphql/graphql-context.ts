/** What every resolver of a request sees as its context. */
import type { Principal } from "../auth/principal.ts";

/** This request's loaders, made on first use; keyed by what they serve (a field node, a field list). */
export interface RequestLoaders {
  get<L extends object>(key: object, make: () => L): L;
}

export interface GraphQLContext {
  principal: Principal;
  loaders: RequestLoaders;
  /** The HTTP request's id (common/request-context.ts): a mutation's change-log entries keep it. */
  requestId?: string;
}

export function createRequestLoaders(): RequestLoaders {
  const loaders = new Map<object, unknown>();
  return {
    get(key, make) {
      let loader = loaders.get(key) as ReturnType<typeof make> | undefined;
      if (!loader) {
        loader = make();
        loaders.set(key, loader);
      }
      return loader;
    },
  };
}
