/**
 * Assembles a dispatcher from a validated configuration: the store adapter,
 * the secret box, the per-endpoint limiter, the HTTP sender with its SSRF
 * policy, the deliverer and the worker, and their metrics (with the delivery
 * queue's depth). The one place adapters are chosen; main.ts and the tests both
 * come through here.
 */
import type Redis from "ioredis";
import { openDeliveryStore } from "../common/delivery-log/open-delivery-store.ts";
import { createDeliveryQueue } from "../common/delivery-queue.ts";
import type { Logger } from "../common/log.ts";
import { createMetricsRegistry, type Registry } from "../common/metrics.ts";
import { redisKeys } from "../common/redis-keys.ts";
import { openSecretBox } from "../common/secret-file.ts";
import { storeLocationOf } from "../common/store/store-location.ts";
import type { DispatcherConfig } from "./config.ts";
import { RETRY_JITTER, type RetryPolicy } from "./decide-outcome.ts";
import { createDeliverer } from "./deliver.ts";
import { createDeliveryMetrics, registerQueueDepth } from "./delivery-metrics.ts";
import { createEndpointLimiter } from "./endpoint-limiter.ts";
import { createHttpSender } from "./http-sender.ts";
import type { LookupHost } from "./ssrf/resolve-destination.ts";
import { createDispatcher, type Dispatcher } from "./worker.ts";

export interface DispatcherEnvironment {
  redis: Redis;
  log: Logger;
  /** Default: the system resolver. */
  lookupHost?: LookupHost;
  /** Extra trusted CA certificates (PEM) for receivers. */
  tlsCa?: string;
  /** Where the dispatcher's metrics go (main.ts: the process's registry). Default: a bare one of its own. */
  metrics?: Registry;
}

export interface OpenDispatcher extends Dispatcher {
  /** Stops (see Dispatcher.stop) and closes the store. The Redis connection stays the caller's. */
  close(graceMs: number): Promise<void>;
  /** The registry its metrics are on. */
  readonly metrics: Registry;
  /** True once its workers take jobs, until it stops. */
  isTakingJobs(): boolean;
}

// Endpoint slots are renewed while held: a killed dispatcher's come back within this.
const ENDPOINT_LEASE_MS = 5000;

/**
 * Builds and starts a dispatcher on the store the configuration chooses.
 * @throws ConfigError when that engine is not available.
 */
export async function openDispatcher(
  config: Readonly<DispatcherConfig>,
  env: DispatcherEnvironment,
): Promise<OpenDispatcher> {
  const store = await openDeliveryStore(storeLocationOf(config));
  const box = openSecretBox(config);
  const retry: RetryPolicy = { schedule: config.DELIVERY_RETRY_SCHEDULE, jitter: RETRY_JITTER };
  const registry = env.metrics ?? createMetricsRegistry();
  const metrics = createDeliveryMetrics(registry);
  // Only counted (getJobCounts): the API's queue adds the jobs, the workers take them.
  const queue = createDeliveryQueue(env.redis, redisKeys(config.REDIS_PREFIX));
  registerQueueDepth(registry, queue);
  const limiter = createEndpointLimiter({
    redis: env.redis,
    keyPrefix: redisKeys(config.REDIS_PREFIX).endpointLeases,
    limit: config.DELIVERY_ENDPOINT_CONCURRENCY,
    leaseMs: ENDPOINT_LEASE_MS,
  });
  const send = createHttpSender({
    policy: { allowHttp: config.DELIVERY_ALLOW_HTTP, allowedRanges: config.DELIVERY_ALLOW_PRIVATE_NETWORKS },
    timeoutMs: config.DELIVERY_TIMEOUT_MS,
    lookupHost: env.lookupHost,
    tlsCa: env.tlsCa,
  });
  const deliver = createDeliverer({
    store,
    box,
    limiter,
    send,
    log: env.log,
    retry,
    maxRetryAfterMs: config.DELIVERY_RETRY_AFTER_MAX_MS,
    busy: {
      busyDelayMs: config.DELIVERY_ENDPOINT_BUSY_DELAY_MS,
      maxMs: config.DELIVERY_ENDPOINT_BUSY_MAX_DELAY_MS,
      limit: config.DELIVERY_ENDPOINT_CONCURRENCY,
    },
    metrics,
  });
  const dispatcher = createDispatcher({
    redis: env.redis,
    keys: redisKeys(config.REDIS_PREFIX),
    log: env.log,
    concurrency: config.DISPATCH_CONCURRENCY,
    slowConcurrency: config.DISPATCH_SLOW_CONCURRENCY,
    deliver,
    retry,
    lockDurationMs: config.DISPATCH_LOCK_MS,
    metrics,
  });
  let readied = false;
  let stopped = false;
  let closed = false;
  const stop = (graceMs: number) => {
    stopped = true;
    return dispatcher.stop(graceMs);
  };
  return {
    metrics: registry,
    isTakingJobs: () => readied && !stopped,
    ready: () =>
      dispatcher.ready().then(() => {
        readied = true;
      }),
    stop,
    async close(graceMs) {
      if (closed) return;
      closed = true;
      await stop(graceMs);
      await limiter.close();
      // Redis may be away at shutdown: do not wait on it forever.
      await Promise.race([queue.close().catch(() => undefined), Bun.sleep(1000)]);
      await store.close();
    },
  };
}
