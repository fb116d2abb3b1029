/**
 * The rate limiter's Redis adapter: a token and its tenant in, one admission
 * out, from one script call that reads and takes from both buckets at once
 * (atomic, on Redis's clock), so the limits hold across API processes.
 *
 * When Redis cannot answer at once (disconnected, or slower than `timeoutMs`)
 * the limiter fails open: the request goes on unlimited, without RateLimit
 * headers, and one warning is logged per outage. Writes keep working while
 * Redis is away, as the service promises elsewhere; limits return with Redis.
 */
import type Redis from "ioredis";
import type { Result } from "ioredis";
import type { Logger } from "../../common/log.ts";
import type { RedisKeys } from "../../common/redis-keys.ts";
import {
  type BucketReading,
  decideAdmission,
  isRuleOn,
  noRateLimits,
  type RateLimiter,
  type RateLimitRules,
} from "./rate-limiter.ts";

/**
 * Two token buckets kept as GCRA (the token bucket's virtual-scheduling form): a bucket's key holds
 * the time, in ms, at which it will be full again; no key means full. Each request costs one
 * `interval` (1000 / rate) and a bucket of `burst` requests may run at most `burst × interval`
 * ahead of now. A request passes when both buckets have room and then takes from both; a refused
 * one takes from neither, so a client hammering while refused still gets its rate.
 *
 * KEYS: the token's bucket, the tenant's. ARGV: now in ms ('' = Redis's clock), then per bucket
 * its interval in ms (0 = off) and burst. Returns per bucket: remaining (-1 when off), ms until
 * full, ms until it admits one when it refused (0 otherwise).
 */
const TAKE = `
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local ahead, interval, span = {}, {}, {}
local allowed = true
for i = 1, 2 do
  interval[i] = tonumber(ARGV[2 * i])
  if interval[i] > 0 then
    span[i] = interval[i] * tonumber(ARGV[2 * i + 1])
    ahead[i] = math.max(0, (tonumber(redis.call('GET', KEYS[i])) or now) - now)
    if ahead[i] + interval[i] > span[i] + 1e-6 then allowed = false end
  end
end
local out = {}
for i = 1, 2 do
  if interval[i] > 0 then
    local after = ahead[i]
    if allowed then
      after = after + interval[i]
      redis.call('SET', KEYS[i], string.format('%.3f', now + after), 'PX', math.ceil(after))
    end
    local retry = 0
    if not allowed and ahead[i] + interval[i] > span[i] + 1e-6 then
      retry = math.max(1, math.ceil(ahead[i] + interval[i] - span[i]))
    end
    out[#out + 1] = math.floor((span[i] - after) / interval[i] + 1e-6)
    out[#out + 1] = math.ceil(after)
    out[#out + 1] = retry
  else
    out[#out + 1] = -1
    out[#out + 1] = 0
    out[#out + 1] = 0
  end
end
return out
`;

declare module "ioredis" {
  interface RedisCommander<Context> {
    /** The rate-limit script above (defined by createRedisRateLimiter). */
    tdsTakeRequest(
      tokenKey: string,
      tenantKey: string,
      now: string,
      tokenIntervalMs: string,
      tokenBurst: string,
      tenantIntervalMs: string,
      tenantBurst: string,
    ): Result<number[], Context>;
  }
}

/** The two buckets' readings for one request (null for a bucket that is off). */
export type BucketReadings = { token: BucketReading | null; tenant: BucketReading | null };

/**
 * Runs the script once: takes one request from the buckets at `keys` when both have room.
 * `now` (ms) is for tests; by default Redis's clock decides, so API processes' clocks may differ.
 */
export async function takeRequest(
  redis: Redis,
  keys: { token: string; tenant: string },
  rules: RateLimitRules,
  now?: number,
): Promise<BucketReadings> {
  defineScript(redis);
  const interval = (perSecond: number) => (perSecond > 0 ? String(1000 / perSecond) : "0");
  const answer = await redis.tdsTakeRequest(
    keys.token,
    keys.tenant,
    now === undefined ? "" : String(now),
    interval(rules.token.perSecond),
    String(rules.token.burst),
    interval(rules.tenant.perSecond),
    String(rules.tenant.burst),
  );
  const reading = (at: number): BucketReading | null =>
    (answer[at] ?? -1) < 0
      ? null
      : { remaining: answer[at] ?? 0, fullInMs: answer[at + 1] ?? 0, retryInMs: answer[at + 2] ?? 0 };
  return { token: reading(0), tenant: reading(3) };
}

const defined = new WeakSet<Redis>();
function defineScript(redis: Redis): void {
  if (defined.has(redis)) return;
  // ioredis sends it by its SHA and falls back to the text when Redis has not seen it (after a restart, say).
  redis.defineCommand("tdsTakeRequest", { numberOfKeys: 2, lua: TAKE });
  defined.add(redis);
}

/** Connection states of a client that has not connected yet. */
const STARTING = new Set<string>(["wait", "connecting", "connect"]);

export interface RedisRateLimiterDeps {
  redis: Redis;
  keys: RedisKeys;
  rules: RateLimitRules;
  log: Logger;
  /** How long a request waits for Redis's answer before going on unlimited, in ms. Default 250. */
  timeoutMs?: number;
}

/** The limiter of an API process; with both rules off, one that never asks Redis. */
export function createRedisRateLimiter({
  redis,
  keys,
  rules,
  log,
  timeoutMs = 250,
}: RedisRateLimiterDeps): RateLimiter {
  if (!isRuleOn(rules.token) && !isRuleOn(rules.tenant)) return noRateLimits;
  let failingOpen = false;
  let everReady = false;
  const failOpen = (reason: string) => {
    if (!failingOpen) log.warn("rate limits not enforced: Redis does not answer", { reason });
    failingOpen = true;
    return null;
  };

  return {
    async admit(tenantId, tokenId) {
      // Once connected, a lost connection means an outage: go on at once rather than queue the call
      // until Redis is back. Before the first connection (a starting process) it may wait its turn.
      if (redis.status === "ready") everReady = true;
      else if (everReady || !STARTING.has(redis.status)) return failOpen(`connection ${redis.status}`);
      const bucketKeys = {
        token: keys.tokenRateBucket(tenantId, tokenId),
        tenant: keys.tenantRateBucket(tenantId),
      };
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), timeoutMs);
      });
      try {
        const readings = await Promise.race([takeRequest(redis, bucketKeys, rules), late]);
        if (readings === "late") return failOpen(`no answer within ${timeoutMs} ms`);
        if (failingOpen) log.info("rate limits enforced again: Redis answers");
        failingOpen = false;
        return decideAdmission(rules, readings);
      } catch (error) {
        return failOpen(error instanceof Error ? error.message : String(error));
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
