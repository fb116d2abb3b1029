/**
 * Real dispatchers for tests: the run's Redis under a fresh prefix, a fresh
 * migrated store file, the production assembly (openDispatcher) with a test
 * configuration (loopback and http allowed, short retry schedule), and the
 * real delivery queue to enqueue on. Log lines are kept for assertions.
 */
import { createDeliveryQueue, type DeliveryQueue } from "../../common/delivery-queue.ts";
import { createLogger, type Logger } from "../../common/log.ts";
import { loadDispatcherConfig } from "../../dispatcher/config.ts";
import {
  type DispatcherEnvironment,
  type OpenDispatcher,
  openDispatcher,
} from "../../dispatcher/open-dispatcher.ts";
import { type DeliveryLogFixture, openDeliveryLog, TEST_SECRETS_KEY } from "../support/delivery-log.ts";
import { openTestRedis, type TestRedis } from "../support/redis.ts";

const TEST_DISPATCHER_ENV = {
  DELIVERY_ALLOW_HTTP: "true",
  DELIVERY_ALLOW_PRIVATE_NETWORKS: "127.0.0.0/8,::1",
  DELIVERY_RETRY_SCHEDULE: "100ms,100ms,100ms",
  DELIVERY_ENDPOINT_BUSY_DELAY_MS: "50",
  DELIVERY_TIMEOUT_MS: "5000",
  LOG_LEVEL: "info",
  // A dispatcher process of these tests serves no operations listener (so none waits on port 3001).
  DISPATCHER_PORT: "0",
};

export interface Harness {
  redis: TestRedis;
  store: DeliveryLogFixture;
  queue: DeliveryQueue;
  /** Every log line the harness's dispatchers wrote, parsed. */
  logLines: Record<string, unknown>[];
  /** The environment a dispatcher process would get (for subprocess tests). */
  env(overrides?: Record<string, string>): Record<string, string>;
  /** Starts a dispatcher with the test environment plus `overrides`; it is closed with the harness. */
  start(overrides?: Record<string, string>, extra?: Partial<DispatcherEnvironment>): Promise<OpenDispatcher>;
  close(): Promise<void>;
}

export function openHarness(): Harness {
  const redis = openTestRedis();
  const store = openDeliveryLog();
  const queue = createDeliveryQueue(redis.redis, redis.keys);
  const logLines: Record<string, unknown>[] = [];
  const log: Logger = createLogger("debug", {}, (line) => logLines.push(JSON.parse(line)));
  const started: OpenDispatcher[] = [];
  const env = (overrides: Record<string, string> = {}) => ({
    REDIS_URL: redis.url,
    REDIS_PREFIX: redis.prefix,
    DATA_DIR: store.dataDir,
    SECRETS_KEY: TEST_SECRETS_KEY,
    ...TEST_DISPATCHER_ENV,
    ...overrides,
  });
  return {
    redis,
    store,
    queue,
    logLines,
    env,
    async start(overrides = {}, extra = {}) {
      const config = loadDispatcherConfig(env(overrides));
      const dispatcher = await openDispatcher(config, { redis: redis.redis, log, ...extra });
      started.push(dispatcher);
      await dispatcher.ready();
      return dispatcher;
    },
    async close() {
      await Promise.all(started.map((d) => d.close(1000)));
      await queue.close();
      await redis.close();
      store.close();
    },
  };
}
