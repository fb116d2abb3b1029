/** A connection to the run's private Redis with a key prefix no other test uses. */
import type Redis from "ioredis";
import { connectRedis } from "../../common/redis.ts";
import { type RedisKeys, redisKeys } from "../../common/redis-keys.ts";

export interface TestRedis {
  url: string;
  redis: Redis;
  prefix: string;
  keys: RedisKeys;
  /** Deletes the prefix's keys and closes the connection. */
  close(): Promise<void>;
}

function testRedisUrl(): string {
  const url = process.env.TEST_REDIS_URL;
  if (!url) throw new Error("TEST_REDIS_URL is unset: run tests with `bun test` (the preload starts Redis)");
  return url;
}

export function openTestRedis(): TestRedis {
  const url = testRedisUrl();
  const redis = connectRedis(url, () => undefined);
  const prefix = `test-${crypto.randomUUID().slice(0, 8)}`;
  return {
    url,
    redis,
    prefix,
    keys: redisKeys(prefix),
    async close() {
      const found = await redis.keys(`${prefix}:*`);
      if (found.length > 0) await redis.del(...found);
      // As the processes do at shutdown: a reply still on its way when QUIT closes the connection
      // (the live audience answers a roll call, say) makes ioredis reject the QUIT itself.
      await redis.quit().catch(() => undefined);
    },
  };
}
