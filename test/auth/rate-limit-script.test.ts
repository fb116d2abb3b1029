/** The rate-limit script against the run's real Redis, step by step on a clock the table sets. */
import { afterAll, describe, expect, test } from "bun:test";
import type { BucketReadings, RateLimitRules } from "../../api/auth/rate-limiter.ts";
import { takeRequest } from "../../api/auth/redis-rate-limiter.ts";
import { openTestRedis } from "../support/redis.ts";

const redis = openTestRedis();
afterAll(() => redis.close());

/** remaining, ms until full, ms until it admits one (0: it had room). */
type Reading = [number, number, number];
const reading = ([remaining, fullInMs, retryInMs]: Reading) => ({ remaining, fullInMs, retryInMs });

// Token: 10/s (one request per 100 ms), bursts of 3. Tenant: 100/s (10 ms), bursts of 5.
const rules: RateLimitRules = { token: { perSecond: 10, burst: 3 }, tenant: { perSecond: 100, burst: 5 } };
const T = 1_000_000;

/** [ms after T, token id, token reading, tenant reading]: the script's answer at each step, in order. */
const steps: [number, string, Reading, Reading][] = [
  [0, "A", [2, 100, 0], [4, 10, 0]],
  [0, "A", [1, 200, 0], [3, 20, 0]],
  [0, "A", [0, 300, 0], [2, 30, 0]],
  // A's bucket is empty: refused, and neither bucket is taken from.
  [0, "A", [0, 300, 100], [2, 30, 0]],
  [50, "A", [0, 250, 50], [5, 0, 0]],
  // One interval later A has room for one again.
  [100, "A", [0, 300, 0], [4, 10, 0]],
  // Other tokens of the tenant pass until the tenant's bucket is empty...
  [100, "B", [2, 100, 0], [3, 20, 0]],
  [100, "C", [2, 100, 0], [2, 30, 0]],
  [100, "D", [2, 100, 0], [1, 40, 0]],
  [100, "E", [2, 100, 0], [0, 50, 0]],
  // ...then a fresh token is refused by the tenant's bucket, and its own stays full.
  [100, "F", [3, 0, 0], [0, 50, 10]],
  [100, "F", [3, 0, 0], [0, 50, 10]],
  [110, "F", [2, 100, 0], [0, 50, 0]],
];

describe("the rate-limit script", () => {
  const keysOf = (token: string) => ({
    token: redis.keys.tokenRateBucket("acme", token),
    tenant: redis.keys.tenantRateBucket("acme"),
  });

  test("takes from both buckets or from neither, step by step", async () => {
    const answers: BucketReadings[] = [];
    for (const [at, token] of steps)
      answers.push(await takeRequest(redis.redis, keysOf(token), rules, T + at));
    expect(answers).toEqual(
      steps.map(([, , token, tenant]) => ({ token: reading(token), tenant: reading(tenant) })),
    );
  });

  test("a bucket expires when it would be full again", async () => {
    const keys = {
      token: redis.keys.tokenRateBucket("ttl", "A"),
      tenant: redis.keys.tenantRateBucket("ttl"),
    };
    await takeRequest(redis.redis, keys, rules, T);
    await takeRequest(redis.redis, keys, rules, T);
    const [token, tenant] = await Promise.all([redis.redis.pttl(keys.token), redis.redis.pttl(keys.tenant)]);
    expect(token).toBeGreaterThan(0);
    expect(token).toBeLessThanOrEqual(200);
    expect(tenant).toBeGreaterThan(0);
    expect(tenant).toBeLessThanOrEqual(20);
  });

  test("a bucket whose rate is 0 is off: not read, not written", async () => {
    const keys = {
      token: redis.keys.tokenRateBucket("off", "A"),
      tenant: redis.keys.tenantRateBucket("off"),
    };
    const off = { token: rules.token, tenant: { perSecond: 0, burst: 5 } };
    const answer = await takeRequest(redis.redis, keys, off, T);
    expect(answer).toEqual({ token: reading([2, 100, 0]), tenant: null });
    expect(await redis.redis.exists(keys.tenant)).toBe(0);
  });

  test("without a clock from the caller, Redis's own decides", async () => {
    const keys = {
      token: redis.keys.tokenRateBucket("now", "A"),
      tenant: redis.keys.tenantRateBucket("now"),
    };
    const slow = { token: { perSecond: 0.01, burst: 2 }, tenant: { perSecond: 0, burst: 1 } };
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push((await takeRequest(redis.redis, keys, slow)).token);
    expect(answers.map((answer) => answer?.remaining)).toEqual([1, 0, 0]);
    expect(answers[2]?.retryInMs).toBeGreaterThan(90_000);
  });
});
