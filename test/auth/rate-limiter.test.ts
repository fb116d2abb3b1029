/** Turning the buckets' readings into one answer (pure), its headers, and the limiter failing open. */
import { describe, expect, test } from "bun:test";
import { rateLimitHeaders } from "../../api/auth/rate-limit-headers.ts";
import {
  assertAdmitted,
  type BucketReading,
  decideAdmission,
  type RateAdmission,
  type RateLimitRules,
} from "../../api/auth/rate-limiter.ts";
import { createRedisRateLimiter } from "../../api/auth/redis-rate-limiter.ts";
import { RateLimitedError } from "../../common/errors.ts";
import { createLogger } from "../../common/log.ts";
import { connectRedis } from "../../common/redis.ts";
import { redisKeys } from "../../common/redis-keys.ts";
import { freePort } from "../../scripts/private-redis.ts";
import { openTestRedis } from "../support/redis.ts";

const rules: RateLimitRules = { token: { perSecond: 10, burst: 20 }, tenant: { perSecond: 50, burst: 100 } };
/** remaining, ms until full, ms until it admits one. */
const r = (remaining: number, fullInMs: number, retryInMs = 0): BucketReading => ({
  remaining,
  fullInMs,
  retryInMs,
});

describe("decideAdmission", () => {
  const table: [string, BucketReading | null, BucketReading | null, Partial<RateAdmission> | null][] = [
    ["both off", null, null, null],
    [
      "allowed: the token has fewer left",
      r(5, 1500),
      r(60, 800),
      { allowed: true, scope: "token", limit: 20, remaining: 5, resetSeconds: 2, retryAfterSeconds: 0 },
    ],
    [
      "allowed: the tenant has fewer left",
      r(19, 100),
      r(3, 1940),
      { allowed: true, scope: "tenant", limit: 100, remaining: 3, resetSeconds: 2, retryAfterSeconds: 0 },
    ],
    ["allowed: a tie goes to the slower to refill", r(3, 1700), r(3, 1940), { scope: "tenant" }],
    ["allowed: a full tie goes to the token", r(3, 1700), r(3, 1700), { scope: "token" }],
    [
      "refused by the token",
      r(0, 2000, 100),
      r(50, 1000),
      { allowed: false, scope: "token", limit: 20, remaining: 0, resetSeconds: 2, retryAfterSeconds: 1 },
    ],
    [
      "refused by the tenant while the token has room",
      r(12, 800),
      r(0, 2000, 2500),
      { allowed: false, scope: "tenant", limit: 100, remaining: 0, resetSeconds: 2, retryAfterSeconds: 3 },
    ],
    ["refused by both: the longer wait", r(0, 2000, 100), r(0, 2000, 2500), { scope: "tenant" }],
    ["only the token on", r(7, 1300), null, { allowed: true, scope: "token", remaining: 7 }],
    ["only the tenant on", null, r(0, 2000, 5), { allowed: false, scope: "tenant", retryAfterSeconds: 1 }],
  ];
  for (const [name, token, tenant, expected] of table) {
    test(name, () => {
      const admission = decideAdmission(rules, { token, tenant });
      if (expected === null) expect(admission).toBeNull();
      else expect(admission).toMatchObject(expected);
    });
  }

  test("a refusal throws RateLimitedError carrying Retry-After; an admission does not", () => {
    const refused = decideAdmission(rules, { token: r(0, 2000, 1200), tenant: r(5, 10) });
    expect(() => assertAdmitted(refused)).toThrow(RateLimitedError);
    try {
      assertAdmitted(refused);
    } catch (error) {
      expect((error as RateLimitedError).retryAfterSeconds).toBe(2);
      expect((error as RateLimitedError).message).toContain("this token");
    }
    expect(() => assertAdmitted(decideAdmission(rules, { token: r(1, 10), tenant: null }))).not.toThrow();
    expect(() => assertAdmitted(null)).not.toThrow();
  });

  test("the headers name the described bucket's budget; none without limits", () => {
    const admission = decideAdmission(rules, { token: r(5, 1500), tenant: r(60, 800) });
    expect(rateLimitHeaders(admission)).toEqual({
      "ratelimit-limit": "20",
      "ratelimit-remaining": "5",
      "ratelimit-reset": "2",
    });
    expect(rateLimitHeaders(null)).toEqual({});
  });
});

describe("the Redis limiter fails open", () => {
  const capture = () => {
    const lines: string[] = [];
    const log = createLogger("info", {}, (line) => lines.push(line));
    return {
      log,
      warnings: () => lines.map((line) => JSON.parse(line)).filter((line) => line.level === "warn"),
    };
  };

  test("Redis unreachable: every request admitted at once, unlimited, one warning", async () => {
    const redis = connectRedis(`redis://127.0.0.1:${freePort()}`, () => undefined);
    const { log, warnings } = capture();
    const limiter = createRedisRateLimiter({ redis, keys: redisKeys("down"), rules, log });
    try {
      await Bun.sleep(100); // the first connection attempt has failed by now
      const started = performance.now();
      const answers = await Promise.all(Array.from({ length: 50 }, () => limiter.admit("acme", "A")));
      expect(performance.now() - started).toBeLessThan(50);
      expect(answers.every((answer) => answer === null)).toBe(true);
      expect(warnings().length).toBe(1);
      expect(warnings()[0].msg).toContain("rate limits not enforced");
    } finally {
      redis.disconnect();
    }
  });

  test("Redis slower than the deadline: admitted after it, unlimited; enforced again once Redis answers", async () => {
    const own = openTestRedis();
    const pauser = connectRedis(own.url, () => undefined);
    const { log, warnings } = capture();
    const limiter = createRedisRateLimiter({ redis: own.redis, keys: own.keys, rules, log, timeoutMs: 100 });
    try {
      expect(await limiter.admit("acme", "A")).toMatchObject({ allowed: true });
      await pauser.client("PAUSE", 600, "WRITE");
      const started = performance.now();
      expect(await limiter.admit("acme", "A")).toBeNull();
      expect(performance.now() - started).toBeLessThan(400);
      expect(warnings().length).toBe(1);
      await Bun.sleep(700);
      expect(await limiter.admit("acme", "A")).toMatchObject({ allowed: true });
    } finally {
      await pauser.client("UNPAUSE");
      pauser.disconnect();
      await own.close();
    }
  });
});
