/**
 * A Redis lease: at most one holder of a key at a time, across API processes
 * (the change feed takes one per partition of the change log). The holder
 * renews it well before it expires; a holder that cannot renew (Redis away,
 * lease lost) stops counting itself the holder when the time it was last
 * granted runs out, which is never later than Redis lets the key go.
 */
import type Redis from "ioredis";

/** Takes the key when free, renews it when ours: 1, else 0 (someone else holds it). */
const HOLD = `local holder = redis.call("get", KEYS[1])
if holder == false then return redis.call("set", KEYS[1], ARGV[1], "PX", ARGV[2]) and 1 or 0 end
if holder == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) end
return 0`;
const RELEASE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

export interface Lease {
  /** Takes or renews the lease in Redis as needed; true when this holder has it. */
  hold(): Promise<boolean>;
  /**
   * True while the time the last successful `hold` was granted lasts (no Redis call): measured from
   * before its request was sent, so it ends no later than the key does in Redis.
   */
  held(): boolean;
  /** Gives the lease up (only if still this holder's). */
  release(): Promise<void>;
}

/**
 * A lease on `key` for `ttlMs`, held under the name `owner` (what the key holds while it is held:
 * operators see who has it).
 */
export function createLease(
  redis: Redis,
  key: string,
  ttlMs: number,
  owner: string = crypto.randomUUID(),
): Lease {
  let heldUntil = 0;
  return {
    async hold() {
      const now = Date.now();
      // Renew when a third of the lease is gone: one Redis round trip per third, not per call.
      if (heldUntil - now > (ttlMs * 2) / 3) return true;
      const granted = (await redis.eval(HOLD, 1, key, owner, String(ttlMs))) === 1;
      heldUntil = granted ? now + ttlMs : 0;
      return granted;
    },
    held: () => heldUntil > Date.now(),
    async release() {
      heldUntil = 0;
      await redis.eval(RELEASE, 1, key, owner);
    },
  };
}
