/**
 * Per-endpoint concurrency limit held in Redis, so it holds across every
 * dispatcher process: an endpoint (`host:port`) in, a lease (or none, when the
 * endpoint is at its limit) out. A counting semaphore of expiring leases —
 * one sorted set per endpoint, members are lease ids scored by their expiry
 * on Redis's clock. A held lease is renewed while its delivery runs, so
 * leases can be short: the slots of a dispatcher that dies come back on their
 * own within one lease time. A released slot lingers in this process for a few
 * milliseconds: a steady stream to one endpoint then takes and releases slots
 * without a Redis round trip each, while the limit still counts them.
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
  /** How long this process has held its oldest slot at `endpoint`, in ms; 0 when it holds none. */
  heldFor(endpoint: string): number;
  /** Gives back the released slots still lingering here (at shutdown). */
  close(): Promise<void>;
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
  /**
   * How long a released slot stays with this process (still counted in Redis) for its next
   * delivery to the same endpoint, which then takes it without a round trip. Default 20.
   */
  lingerMs?: number;
}

/** A slot taken in Redis: its lease id, kept alive by the renewal timer until given back. */
interface Slot {
  key: string;
  id: string;
  renewal: ReturnType<typeof setInterval>;
  /** While it lingers here: when it was released (ms since the epoch). */
  idleSince: number;
}

/** What release() answers when it had nothing to wait for. */
const RELEASED: Promise<void> = Promise.resolve();

/** Creates the limiter. */
export function createEndpointLimiter({
  redis,
  keyPrefix,
  limit,
  leaseMs,
  lingerMs = 20,
}: EndpointLimiterOptions): EndpointLimiter {
  // Released slots kept for the next delivery to their endpoint, newest last, each for about lingerMs.
  const idle = new Map<string, Slot[]>();
  // When this process took each slot it holds, per endpoint (oldest first), and the acquires here waiting for one.
  const held = new Map<string, number[]>();
  const waiting = new Map<string, (() => void)[]>();

  const heldFor = (endpoint: string) => {
    const oldest = held.get(endpoint)?.[0];
    return oldest === undefined ? 0 : Date.now() - oldest;
  };
  // Slots held here for longer than the wait are not about to come free: an endpoint this slow is not waited for.
  const freesSoon = (endpoint: string, waitMs: number) => held.has(endpoint) && heldFor(endpoint) < waitMs;

  const released = (endpoint: string, takenAt: number) => {
    const times = held.get(endpoint) ?? [];
    times.splice(times.indexOf(takenAt), 1);
    if (times.length === 0) held.delete(endpoint);
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

  /** Gives a slot back to Redis. */
  const free = async (slot: Slot) => {
    clearInterval(slot.renewal);
    await redis.zrem(slot.key, slot.id);
  };

  // One interval (running while slots linger) gives back those released lingerMs ago or more: a timer
  // set and cleared for each release cost more than the rest of taking and releasing a slot. A slot
  // lingers between lingerMs and 1.5 × lingerMs. The newest is taken first, so that a process using
  // fewer slots than it holds gives back the ones it no longer needs.
  let sweeper: ReturnType<typeof setInterval> | null = null;
  const sweep = () => {
    const expired = Date.now() - lingerMs;
    for (const [endpoint, kept] of idle) {
      let stale = 0;
      while (stale < kept.length && (kept[stale] as Slot).idleSince <= expired) stale++;
      if (stale === 0) continue;
      // Not given back (Redis away): the lease expires by itself.
      for (const slot of kept.splice(0, stale)) free(slot).catch(() => undefined);
      if (kept.length === 0) idle.delete(endpoint);
    }
    if (idle.size === 0 && sweeper !== null) {
      clearInterval(sweeper);
      sweeper = null;
    }
  };

  /** Keeps a released slot here for a while, or gives it back at once when it may not linger. */
  const keepIdle = (endpoint: string, slot: Slot): Promise<void> => {
    if (lingerMs <= 0) return free(slot);
    let kept = idle.get(endpoint);
    if (kept === undefined) {
      kept = [];
      idle.set(endpoint, kept);
    }
    slot.idleSince = Date.now();
    kept.push(slot);
    if (sweeper === null) {
      sweeper = setInterval(sweep, Math.max(1, lingerMs / 2));
      sweeper.unref();
    }
    return RELEASED;
  };

  /** The slot as a lease of this process. */
  const lease = (endpoint: string, slot: Slot): EndpointLease => {
    const takenAt = Date.now();
    const times = held.get(endpoint) ?? [];
    times.push(takenAt);
    held.set(endpoint, times);
    let done = false;
    return {
      release() {
        if (done) return RELEASED;
        done = true;
        try {
          return keepIdle(endpoint, slot);
        } finally {
          // After keeping it idle here, so that a waiter woken here finds the slot.
          released(endpoint, takenAt);
        }
      },
    };
  };

  /** A released slot lingering here, taken without a round trip; null when there is none. */
  function takeIdle(endpoint: string): EndpointLease | null {
    const kept = idle.get(endpoint);
    const slot = kept?.pop();
    if (!slot) return null;
    if (kept?.length === 0) idle.delete(endpoint);
    return lease(endpoint, slot);
  }

  async function tryAcquire(endpoint: string): Promise<EndpointLease | null> {
    const kept = takeIdle(endpoint);
    if (kept) return kept;
    // This process alone fills the endpoint's limit: no need to ask Redis.
    if ((held.get(endpoint)?.length ?? 0) >= limit) return null;
    const key = `${keyPrefix}:${endpoint}`;
    const id = randomUUID();
    const taken = await redis.eval(ACQUIRE, 1, key, limit, leaseMs, id);
    if (taken !== 1) return null;
    const renewal = setInterval(() => {
      redis.eval(RENEW, 1, key, leaseMs, id).catch(() => undefined);
    }, leaseMs / 3);
    renewal.unref();
    return lease(endpoint, { key, id, renewal, idleSince: 0 });
  }

  async function acquireSlow(endpoint: string, waitMs: number): Promise<EndpointLease | null> {
    const deadline = Date.now() + waitMs;
    // Behind those already waiting here: a newcomer does not take the slot they wait for.
    let woken = false;
    if (waitMs > 0 && freesSoon(endpoint, waitMs) && waiting.has(endpoint)) {
      await slotReleased(endpoint, waitMs, false);
      woken = true;
    }
    for (;;) {
      const lease = await tryAcquire(endpoint);
      if (lease) return lease;
      // Only a slot held here is sure to be released soon, and to say so: without a recent one, give up at once.
      const left = deadline - Date.now();
      if (left <= 0 || !freesSoon(endpoint, waitMs)) return null;
      await slotReleased(endpoint, left, woken);
      woken = true;
    }
  }

  return {
    heldFor,
    async close() {
      const slots = [...idle.values()].flat();
      idle.clear();
      if (sweeper !== null) clearInterval(sweeper);
      sweeper = null;
      await Promise.all(slots.map((slot) => free(slot).catch(() => undefined)));
    },
    acquire(endpoint, waitMs = 0) {
      // The common case answers within the call (a settled promise): a slot lingers here, nobody here waits.
      const kept = waiting.has(endpoint) ? null : takeIdle(endpoint);
      return kept ? Promise.resolve(kept) : acquireSlow(endpoint, waitMs);
    },
  };
}
