/**
 * A Redis lease: at most one change-feed reader per store at a time, across
 * API processes. The holder renews it well before it expires; a reader that
 * cannot renew (Redis away, lease lost) stops reading until it holds it again.
 */
import type Redis from "ioredis";

const RENEW = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

export interface Lease {
  /** True when this process holds the lease (taking or renewing it as needed). */
  hold(): Promise<boolean>;
  release(): Promise<void>;
}

export function createLease(redis: Redis, key: string, ttlMs: number): Lease {
  const owner = crypto.randomUUID();
  let heldUntil = 0;
  return {
    async hold() {
      const now = Date.now();
      // Renew when a third of the lease is gone: one Redis round trip per third, not per batch.
      if (heldUntil - now > (ttlMs * 2) / 3) return true;
      const renewed = heldUntil > now && (await redis.eval(RENEW, 1, key, owner, String(ttlMs))) === 1;
      const taken = renewed || (await redis.set(key, owner, "PX", ttlMs, "NX")) === "OK";
      heldUntil = taken ? now + ttlMs : 0;
      return taken;
    },
    async release() {
      heldUntil = 0;
      await redis.eval(RELEASE, 1, key, owner);
    },
  };
}
