/**
 * The live API processes, as the change feed spreads its partitions over them:
 * each process beats a heartbeat into one Redis sorted set (member: the
 * process's name, score: when its heartbeat lapses, on Redis's clock, so the
 * machines' clocks need not agree) and reads back the members whose heartbeat
 * has not lapsed. A process that stops beating (dead, or cut off from Redis)
 * drops out of every other process's view `ttlMs` after its last beat.
 */
import type Redis from "ioredis";

/**
 * KEYS: the set. ARGV: the member, the heartbeat's life in ms. Drops lapsed members, beats, keeps the
 * set itself only as long as a heartbeat, and returns the live members.
 */
const BEAT = `local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now)
redis.call("ZADD", KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call("PEXPIRE", KEYS[1], ARGV[2])
return redis.call("ZRANGE", KEYS[1], 0, -1)`;

export interface FeedMembers {
  /** Beats this process's heartbeat; resolves to the live members, this one included. */
  beat(): Promise<string[]>;
  /** Leaves the set at once (a clean stop), so the others need not wait for the heartbeat to lapse. */
  leave(): Promise<void>;
}

/** The membership of `self` in the set at `key`, each heartbeat living `ttlMs`. */
export function createFeedMembers(redis: Redis, key: string, self: string, ttlMs: number): FeedMembers {
  return {
    beat: async () => (await redis.eval(BEAT, 1, key, self, String(ttlMs))) as string[],
    async leave() {
      await redis.zrem(key, self);
    },
  };
}
