/**
 * The one place that builds ioredis connections, with the options BullMQ needs
 * (`maxRetriesPerRequest: null`) and a bounded reconnect back-off.
 */
import Redis from "ioredis";

/** Opens a connection to `url`. Connection errors are reported to `onError`, not thrown. */
export function connectRedis(url: string, onError: (error: Error) => void): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  redis.on("error", onError);
  return redis;
}

/** Pings Redis with a deadline; true when it answered. */
export async function isRedisReachable(redis: Redis, timeoutMs = 1000): Promise<boolean> {
  if (redis.status === "end") return false;
  const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), timeoutMs));
  const ping = redis.ping().then(
    (answer) => answer === "PONG",
    () => false,
  );
  return Promise.race([ping, timeout]);
}
