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
import type { ApiConfig } from "./config.ts";
import { errorPlugin } from "./http/error-plugin.ts";
import { healthRoutes } from "./http/health-routes.ts";
import type { Store } from "./store/store.ts";

export interface AppDeps {
  config: Readonly<ApiConfig>;
  store: Store;
  redis: Redis;
  auth: AuthService;
  log: Logger;
}

export function createApp({ config, store, redis, auth, log }: AppDeps) {
  return new Elysia()
    .use(errorPlugin(log, config.MAX_BODY_BYTES))
    .use(healthRoutes({ store: () => store.ping(), redis: () => isRedisReachable(redis) }))
    .use(authRoutes(auth));
}

export type App = ReturnType<typeof createApp>;
