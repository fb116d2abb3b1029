/** What every resolver of a request sees as its context. */
import type { Principal } from "../auth/principal.ts";
import type { BatchLoader } from "./queries/batch-loader.ts";

/** This request's loaders, made on first use; keyed by what they serve (a field node, a field list). */
export interface RequestLoaders {
  // biome-ignore lint/suspicious/noExplicitAny: loaders of different key and value types share the map
  get<L extends BatchLoader<any, any>>(key: object, make: () => L): L;
}

export interface GraphQLContext {
  principal: Principal;
  loaders: RequestLoaders;
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
