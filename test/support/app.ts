/**
 * The API in-process for tests: a real store of the run's engine (TEST_STORE:
 * a SQLite file in a fresh directory, or a PostgreSQL or MongoDB database of its own), the
 * run's real Redis under a unique prefix, the real auth service. Requests go
 * through `app.handle(new Request(...))`, exactly as the server would see them.
 */

import { provisionTenant } from "../../api/admin/provision-tenant.ts";
import { createUser } from "../../api/auth/create-user.ts";
import { type ApiConfig, loadApiConfig } from "../../api/config.ts";
import { createApiRuntime } from "../../api/runtime.ts";
import { openCoreServices } from "../../api/services.ts";
import type { Role, Store, Tenant, User } from "../../api/store/store.ts";

import { createLogger, type Logger } from "../../common/log.ts";
import { connectRedis } from "../../common/redis.ts";
import { openTestRedis } from "./redis.ts";
import { makeTempDir, removeTempDir } from "./temp-dirs.ts";
import { freshTestStore, type StoreEnv, storeEnvOf } from "./test-store.ts";

export const TEST_JWT_SECRET = "test-secret-test-secret-test-secret-0123456789";

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** Sent as is (for malformed-body tests); wins over `body`. */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  body: any;
}

export interface ProvisionedTenant {
  tenant: Tenant;
  admin: User;
  adminToken: string;
}

export type TestApp = Awaited<ReturnType<typeof createTestApp>>;

/**
 * A store of the run's engine, fresh unless `env` locates one already (a second app on the first
 * one's store passes the first's `storeEnv`); an app drops only the store it made.
 * `wrapStore` lets a test instrument the real store (counting its queries, say) before the app uses it;
 * `logger` replaces the app's (LOG_LEVEL's, on stderr), for a test to read its lines.
 */
export async function createTestApp(
  env: Record<string, string> = {},
  wrapStore: (store: Store) => Store = (store) => store,
  logger?: Logger,
) {
  const dataDir = makeTempDir("tds-test-");
  const shared =
    env.DATABASE_URL !== undefined || env.MONGODB_URL !== undefined || env.DATA_DIR !== undefined;
  const fresh = shared ? null : await freshTestStore(dataDir, "app");
  const storeEnv: StoreEnv = fresh?.env ?? storeEnvOf(env, dataDir);
  const testRedis = openTestRedis();
  const config: Readonly<ApiConfig> = loadApiConfig({
    ...storeEnv,
    REDIS_URL: testRedis.url,
    REDIS_PREFIX: testRedis.prefix,
    JWT_SECRET: TEST_JWT_SECRET,
    LOG_LEVEL: "silent",
    WEBHOOKS_ALLOW_HTTP: "true",
    ...env,
  });
  const opened = await openCoreServices(config);
  const services = { ...opened, store: wrapStore(opened.store) };
  const log = logger ?? createLogger(config.LOG_LEVEL);
  const { store, auth, catalogues } = services;
  // A test may point REDIS_URL elsewhere (at nothing, say); the app then uses that connection.
  const redis = env.REDIS_URL ? connectRedis(config.REDIS_URL, () => undefined) : testRedis.redis;
  const runtime = createApiRuntime(config, services, redis, log);
  const { app, feed, events } = runtime;

  async function call(method: string, path: string, options: CallOptions = {}): Promise<CallResult> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined = options.rawBody;
    if (body === undefined && options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) {
      headers["content-type"] ??= "application/json";
      // As any real HTTP client does; the server refuses oversized bodies by it.
      headers["content-length"] ??= String(Buffer.byteLength(body));
    }
    const response = await app.handle(new Request(`http://test.local${path}`, { method, headers, body }));
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body: parsed };
  }

  async function provision(name: string): Promise<ProvisionedTenant> {
    const { tenant, user, token } = await provisionTenant(services, { tenantName: name });
    return { tenant, admin: user, adminToken: token.token };
  }

  /** Adds a user with `roles` to the tenant and returns it with a fresh token. */
  async function addUser(tenantId: string, roles: Role[]): Promise<{ user: User; token: string }> {
    const user: User = {
      id: crypto.randomUUID(),
      tenantId,
      username: `user-${crypto.randomUUID().slice(0, 8)}`,
      email: "user@example.invalid",
      firstName: null,
      lastName: "User",
      roles,
      isActive: true,
      createdAt: Date.now(),
    };
    await store.unitOfWork((tx) => createUser(tx, user));
    const issued = await auth.issueToken({ tenantId, userId: user.id });
    return { user, token: issued.token };
  }

  async function close(): Promise<void> {
    try {
      await runtime.stop();
      await store.close();
      if (redis !== testRedis.redis) redis.disconnect();
      await testRedis.close();
    } finally {
      removeTempDir(dataDir);
      await fresh?.drop();
    }
  }

  return {
    app,
    feed,
    live: runtime.live,
    events,
    metrics: runtime.metrics,
    config,
    store,
    auth,
    catalogues,
    redis: testRedis,
    dataDir,
    /** The settings that locate this app's store: another app or process on the same store passes them. */
    storeEnv,
    call,
    provision,
    addUser,
    close,
  };
}
