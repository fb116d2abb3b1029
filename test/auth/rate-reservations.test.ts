/**
 * Admissions taken from Redis ahead of need: the pure bookkeeping step by
 * step, the script taking several at once, and two limiters (as two API
 * processes) flooding one token on the run's real Redis: together they never
 * admit more than the bucket holds, and ask Redis far less than once a request.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { BucketReadings, RateLimitRules } from "../../api/auth/rate-limiter.ts";
import {
  largestReservation,
  newReservation,
  noteGrant,
  RESERVATION_LIFETIME_MS,
  sizeToAsk,
  takeHeld,
} from "../../api/auth/rate-reservations.ts";
import { createRedisRateLimiter, takeRequests } from "../../api/auth/redis-rate-limiter.ts";
import { createLogger } from "../../common/log.ts";
import { connectRedis } from "../../common/redis.ts";
import { openTestRedis } from "../support/redis.ts";

const on = (perSecond: number, burst: number) => ({ perSecond, burst });
const readings = (remaining: number, retryInMs = 0): BucketReadings => ({
  token: { remaining, fullInMs: 1000, retryInMs },
  tenant: null,
});

describe("the bookkeeping (pure)", () => {
  test("the largest reservation is a 32nd of the smaller bucket that is on, 1 to 64", () => {
    expect(largestReservation({ token: on(10, 3), tenant: on(10, 5) })).toBe(1);
    expect(largestReservation({ token: on(500, 1000), tenant: on(1000, 2000) })).toBe(31);
    expect(largestReservation({ token: on(0, 3), tenant: on(1000, 2000) })).toBe(62);
    expect(largestReservation({ token: on(1e6, 1e6), tenant: on(1e6, 1e6) })).toBe(64);
  });

  test("a token starts with one at a time; each reservation used up doubles the next, up to the largest", () => {
    const state = newReservation();
    const asked: number[] = [];
    let now = 1000;
    for (let round = 0; round < 6; round++) {
      const want = sizeToAsk(state, now, 16);
      asked.push(want);
      noteGrant(state, { readings: readings(100), granted: want }, want, now);
      while (takeHeld(state, now)) now++;
    }
    expect(asked).toEqual([1, 2, 4, 8, 16, 16]);
  });

  test("held admissions are handed out until they lapse; the readings count them as remaining", () => {
    const state = newReservation();
    const mine = noteGrant(state, { readings: readings(10), granted: 4 }, 4, 0);
    expect(mine.token?.remaining).toBe(13);
    expect(takeHeld(state, 50)?.token).toEqual({ remaining: 12, fullInMs: 950, retryInMs: 0 });
    expect(takeHeld(state, RESERVATION_LIFETIME_MS)).toBeNull();
    // It lapsed with 2 left after serving 2: the next ask is what it served.
    expect(sizeToAsk(state, RESERVATION_LIFETIME_MS, 16)).toBe(2);
  });

  test("a refusal stands until the bucket would admit again, then Redis is asked", () => {
    const state = newReservation();
    const refused = noteGrant(state, { readings: readings(0, 300), granted: 0 }, 8, 0);
    expect(refused.token?.retryInMs).toBe(300);
    expect(takeHeld(state, 100)?.token).toEqual({ remaining: 0, fullInMs: 900, retryInMs: 200 });
    expect(takeHeld(state, 300)).toBeNull();
  });
});

describe("on the run's Redis", () => {
  const own = openTestRedis();
  afterAll(() => own.close());
  const rules: RateLimitRules = { token: on(0.01, 256), tenant: on(0.01, 1024) };

  test("the script takes as many as both buckets have room for, up to the number asked, or none", async () => {
    const keys = {
      token: own.keys.tokenRateBucket("script", "A"),
      tenant: own.keys.tenantRateBucket("script"),
    };
    const small: RateLimitRules = { token: on(10, 5), tenant: on(100, 100) };
    const T = 5_000_000;
    expect((await takeRequests(own.redis, keys, small, 3, T)).granted).toBe(3);
    const rest = await takeRequests(own.redis, keys, small, 3, T);
    expect(rest.granted).toBe(2);
    expect(rest.readings.token).toEqual({ remaining: 0, fullInMs: 500, retryInMs: 0 });
    const none = await takeRequests(own.redis, keys, small, 3, T);
    expect(none.granted).toBe(0);
    expect(none.readings.token).toEqual({ remaining: 0, fullInMs: 500, retryInMs: 100 });
    // The tenant's bucket was taken from by the granted ones only.
    expect(none.readings.tenant?.remaining).toBe(95);
  });

  test("two limiters flooding one token admit at most its bucket together, asking Redis a few times per hundred", async () => {
    const log = createLogger("silent");
    const second = connectRedis(own.url, () => undefined);
    try {
      const limiters = [own.redis, second].map((redis) =>
        createRedisRateLimiter({ redis, keys: own.keys, rules, log }),
      );
      const calls = async () => {
        const info = await own.redis.info("commandstats");
        const count = (name: string) =>
          Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
        return count("evalsha") + count("eval");
      };
      const before = await calls();
      let admitted = 0;
      let requests = 0;
      for (let round = 0; round < 20; round++) {
        const answers = await Promise.all(
          Array.from({ length: 40 }, (_, i) => (limiters[i % 2] as (typeof limiters)[0]).admit("flood", "T")),
        );
        requests += answers.length;
        admitted += answers.filter((answer) => answer?.allowed).length;
      }
      const asked = (await calls()) - before;
      // The hard bound: never more than the bucket (the refill is 0.01 a second).
      expect(admitted).toBeLessThanOrEqual(256);
      // Little is stranded: each limiter holds at most 8 (256 / 32) when the bucket runs dry.
      expect(admitted).toBeGreaterThanOrEqual(256 - 2 * 8);
      // One Redis call per request before reservations (800 here).
      expect(asked).toBeLessThan(requests / 4);
    } finally {
      second.disconnect();
    }
  });
});
