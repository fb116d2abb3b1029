/**
 * Per-endpoint concurrency limit held in Redis, so it holds across every
 * dispatcher process: an endpoint (`host:port`) in, a lease (or none, when the
 * endpoint is at its limit) out. A counting semaphore of expiring leases —
 * one sorted set per endpoint, members are lease ids scored by their expiry
 * on Redis's clock. A held lease is renewed while its delivery runs, so
 * leases can be short: the slots of a dispatcher that dies come back on their
 * own within one lease time.
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

// Pushes a lease's expiry on, if it is still there (an expired one is not revived).
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`;

export interface EndpointLease {
  /** Frees the slot. Safe to call more than once. */
  release(): Promise<void>;
}

export interface EndpointLimiter {
  /**
   * A slot for `endpoint`, or null when `limit` deliveries to it are in flight
   * already. With `waitMs`, when this process holds some of the endpoint's
   * slots, first waits up to that long for one of them to be released.
   */
  acquire(endpoint: string, waitMs?: number): Promise<EndpointLease | null>;
}

export interface EndpointLimiterOptions {
  redis: Redis;
  /** Prefix of the per-endpoint keys, e.g. `tds:endpoint-leases`. */
  keyPrefix: string;
  /** Deliveries in flight to one endpoint, across all dispatchers. */
  limit: number;
  /**
   * How long a lease lives unless released or renewed; a held lease is
   * renewed every third of this, so only a dead (or frozen) dispatcher's leases expire.
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
  // This process's slots per endpoint, and the acquires here waiting for one of them.
  const held = new Map<string, number>();
  const waiting = new Map<string, (() => void)[]>();

  const released = (endpoint: string) => {
    const left = (held.get(endpoint) ?? 1) - 1;
    if (left > 0) held.set(endpoint, left);
    else held.delete(endpoint);
    const queue = waiting.get(endpoint);
    queue?.shift()?.();
    if (queue?.length === 0) waiting.delete(endpoint);
  };

  /**
   * Resolves when one of this process's slots for `endpoint` is released, or
   * after `ms`. Waiters are served in order; one that lost the freed slot to
   * another process goes back to the front.
   */
  const slotReleased = (endpoint: string, ms: number, front: boolean) =>
    new Promise<void>((resolve) => {
      const queue = waiting.get(endpoint) ?? [];
      waiting.set(endpoint, queue);
      const timer = setTimeout(() => {
        const at = queue.indexOf(wake);
        if (at >= 0) queue.splice(at, 1);
        resolve();
      }, ms);
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      if (front) queue.unshift(wake);
      else queue.push(wake);
    });

  async function tryAcquire(endpoint: string): Promise<EndpointLease | null> {
    const key = `${keyPrefix}:${endpoint}`;
    const id = randomUUID();
    const taken = await redis.eval(ACQUIRE, 1, key, limit, leaseMs, id);
    if (taken !== 1) return null;
    held.set(endpoint, (held.get(endpoint) ?? 0) + 1);
    const renewal = setInterval(() => {
      redis.eval(RENEW, 1, key, leaseMs, id).catch(() => undefined);
    }, leaseMs / 3);
    renewal.unref();
    let done = false;
    return {
      async release() {
        if (done) return;
        done = true;
        clearInterval(renewal);
        try {
          await redis.zrem(key, id);
        } finally {
          released(endpoint);
        }
      },
    };
  }

  return {
    async acquire(endpoint, waitMs = 0) {
      const deadline = Date.now() + waitMs;
      // Behind those already waiting here: a newcomer does not take the slot they wait for.
      let woken = false;
      if (waitMs > 0 && held.has(endpoint) && waiting.has(endpoint)) {
        await slotReleased(endpoint, waitMs, false);
        woken = true;
      }
      for (;;) {
        const lease = await tryAcquire(endpoint);
        if (lease) return lease;
        // Only a slot held here is sure to be released soon, and to say so: without one, give up at once.
        const left = deadline - Date.now();
        if (left <= 0 || !held.has(endpoint)) return null;
        await slotReleased(endpoint, left, woken);
        woken = true;
      }
    },
  };
}
