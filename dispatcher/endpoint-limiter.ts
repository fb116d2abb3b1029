/**
 * Per-endpoint concurrency limit held in Redis, so it holds across every
 * dispatcher process: an endpoint (`host:port`) in, a lease (or none, when the
 * endpoint is at its limit) out. A counting semaphore of expiring leases —
 * one sorted set per endpoint, members are lease ids scored by their expiry
 * on Redis's clock — so the slots of a dispatcher that dies come back on
 * their own once its leases expire.
 */
import { randomUUID } from "node:crypto";
import type Redis from "ioredis";

// Drops expired leases, then takes a slot when one is free. Redis's own clock, so dispatchers' clocks may differ.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

export interface EndpointLease {
  /** Frees the slot. Safe to call more than once. */
  release(): Promise<void>;
}

export interface EndpointLimiter {
  /** A slot for `endpoint`, or null when `limit` deliveries to it are in flight already. */
  acquire(endpoint: string): Promise<EndpointLease | null>;
}

export interface EndpointLimiterOptions {
  redis: Redis;
  /** Prefix of the per-endpoint keys, e.g. `tds:endpoint-leases`. */
  keyPrefix: string;
  /** Deliveries in flight to one endpoint, across all dispatchers. */
  limit: number;
  /**
   * How long a lease lives unless released: longer than any attempt can take
   * (the delivery timeout plus a margin), so only a dead dispatcher's leases expire.
   */
  leaseMs: number;
}

/** Creates the limiter. */
export function createEndpointLimiter({
  redis,
  keyPrefix,
  limit,
  leaseMs,
}: EndpointLimiterOptions): EndpointLimiter {
  return {
    async acquire(endpoint) {
      const key = `${keyPrefix}:${endpoint}`;
      const id = randomUUID();
      const taken = await redis.eval(ACQUIRE, 1, key, limit, leaseMs, id);
      if (taken !== 1) return null;
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          await redis.zrem(key, id);
        },
      };
    },
  };
}
