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
import { setNewest } from "../../common/bounded-map.ts";
import type { Logger } from "../../common/log.ts";
import type { RedisKeys } from "../../common/redis-keys.ts";
import {
  type BucketReading,
  type BucketReadings,
  decideAdmission,
  isRuleOn,
  noRateLimits,
  type RateLimiter,
  type RateLimitRules,
} from "./rate-limiter.ts";
import {
  largestReservation,
  newReservation,
  noteGrant,
  type Reservation,
  sizeToAsk,
  takeHeld,
} from "./rate-reservations.ts";

/**
 * Two token buckets kept as GCRA (the token bucket's virtual-scheduling form): a bucket's key holds
 * the time, in ms, at which it will be full again; no key means full. Each request costs one
 * `interval` (1000 / rate) and a bucket of `burst` requests may run at most `burst × interval`
 * ahead of now. Up to `want` requests are taken at once (rate-reservations.ts): as many as both
 * buckets have room for, at least one; when either has no room, none is taken from either, so a
 * client hammering while refused still gets its rate.
 *
 * KEYS: the token's bucket, the tenant's. ARGV: now in ms ('' = Redis's clock), then per bucket
 * its interval in ms (0 = off) and burst, then `want`. Returns per bucket: remaining (-1 when
 * off), ms until full, ms until it admits one when it refused (0 otherwise); then the requests
 * taken (0: refused).
 */
const TAKE = `
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local taken = tonumber(ARGV[6]) or 1
local ahead, interval, span = {}, {}, {}
for i = 1, 2 do
  interval[i] = tonumber(ARGV[2 * i])
  if interval[i] > 0 then
    span[i] = interval[i] * tonumber(ARGV[2 * i + 1])
    ahead[i] = math.max(0, (tonumber(redis.call('GET', KEYS[i])) or now) - now)
    taken = math.min(taken, math.floor((span[i] - ahead[i] + 1e-6) / interval[i]))
  end
end
taken = math.max(0, taken)
local out = {}
for i = 1, 2 do
  if interval[i] > 0 then
    local after = ahead[i]
    if taken > 0 then
      after = after + taken * interval[i]
      redis.call('SET', KEYS[i], string.format('%.3f', now + after), 'PX', math.ceil(after))
    end
    local retry = 0
    if taken == 0 and ahead[i] + interval[i] > span[i] + 1e-6 then
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
out[#out + 1] = taken
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
      want: string,
    ): Result<number[], Context>;
  }
}

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
  return (await takeRequests(redis, keys, rules, 1, now)).readings;
}

/** Runs the script once: takes up to `want` requests (as many as both buckets have room for), or none. */
export async function takeRequests(
  redis: Redis,
  keys: { token: string; tenant: string },
  rules: RateLimitRules,
  want: number,
  now?: number,
): Promise<{ readings: BucketReadings; granted: number }> {
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
    String(want),
  );
  const reading = (at: number): BucketReading | null =>
    (answer[at] ?? -1) < 0
      ? null
      : { remaining: answer[at] ?? 0, fullInMs: answer[at + 1] ?? 0, retryInMs: answer[at + 2] ?? 0 };
  return { readings: { token: reading(0), tenant: reading(3) }, granted: answer[6] ?? 0 };
}

const defined = new WeakSet<Redis>();
function defineScript(redis: Redis): void {
  if (defined.has(redis)) return;
  // ioredis sends it by its SHA and falls back to the text when Redis has not seen it (after a restart, say).
  redis.defineCommand("tdsTakeRequest", { numberOfKeys: 2, lua: TAKE });
  defined.add(redis);
}

/** Tokens whose reservations a process keeps at most (the least recently seen are forgotten first). */
const MAX_TOKENS_HELD = 10_000;

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

  const largest = largestReservation(rules);
  // What this process holds per token (bounded: a token's entry is a few numbers), and the Redis
  // call under way per token, which the token's other requests wait for rather than make their own.
  const held = new Map<string, Reservation>();
  const asking = new Map<string, Promise<unknown>>();

  return {
    async admit(tenantId, tokenId) {
      const key = `${tenantId}\n${tokenId}`;
      let state = held.get(key);
      if (state === undefined) {
        state = newReservation();
        setNewest(held, key, state, MAX_TOKENS_HELD);
      }
      // One call to Redis per token at a time: the token's other requests wait for its answer and
      // take from what it granted; the one that finds nothing left asks next.
      for (;;) {
        const local = takeHeld(state, Date.now());
        if (local) return decideAdmission(rules, local);
        const pending = asking.get(key);
        if (!pending) break;
        await pending;
      }
      // Once connected, a lost connection means an outage: go on at once rather than queue the call
      // until Redis is back. Before the first connection (a starting process) it may wait its turn.
      if (redis.status === "ready") everReady = true;
      else if (everReady || !STARTING.has(redis.status)) return failOpen(`connection ${redis.status}`);
      const bucketKeys = {
        token: keys.tokenRateBucket(tenantId, tokenId),
        tenant: keys.tenantRateBucket(tenantId),
      };
      const want = sizeToAsk(state, Date.now(), largest);
      const call = takeRequests(redis, bucketKeys, rules, want);
      const settled = call.catch(() => undefined);
      asking.set(key, settled);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), timeoutMs);
      });
      try {
        const answer = await Promise.race([call, late]);
        if (answer === "late") return failOpen(`no answer within ${timeoutMs} ms`);
        if (failingOpen) log.info("rate limits enforced again: Redis answers");
        failingOpen = false;
        return decideAdmission(rules, noteGrant(state, answer, want, Date.now()));
      } catch (error) {
        return failOpen(error instanceof Error ? error.message : String(error));
      } finally {
        clearTimeout(timer);
        if (asking.get(key) === settled) asking.delete(key);
      }
    },
  };
}
