import { describe, expect, test } from "bun:test";
import type { ResponseClass } from "../../dispatcher/classify-response.ts";
import {
  type DeliveryOutcome,
  decideOutcome,
  jitteredDelay,
  maxAttempts,
  type RetryPolicy,
  scheduledDelay,
} from "../../dispatcher/decide-outcome.ts";

const policy: RetryPolicy = { schedule: [5_000, 30_000, 300_000, 1_800_000, 10_800_000], jitter: 0.2 };
const MID = 0.5; // a random draw that lands on the scheduled delay itself

const retry: ResponseClass = { kind: "retry", reason: "HTTP 500" };
const later: ResponseClass = { kind: "retry-after", delayMs: 42_000, reason: "HTTP 429 with Retry-After" };

type Case = [string, ResponseClass, number, DeliveryOutcome];
const CASES: Case[] = [
  ["delivered on any attempt", { kind: "delivered" }, 3, { kind: "succeeded" }],
  ["retry after attempt 1 waits 5 s", retry, 1, { kind: "retry", delayMs: 5_000, reason: "HTTP 500" }],
  ["retry after attempt 2 waits 30 s", retry, 2, { kind: "retry", delayMs: 30_000, reason: "HTTP 500" }],
  ["retry after attempt 3 waits 5 min", retry, 3, { kind: "retry", delayMs: 300_000, reason: "HTTP 500" }],
  ["retry after attempt 4 waits 30 min", retry, 4, { kind: "retry", delayMs: 1_800_000, reason: "HTTP 500" }],
  ["retry after attempt 5 waits 3 h", retry, 5, { kind: "retry", delayMs: 10_800_000, reason: "HTTP 500" }],
  [
    "attempt 6 is the last",
    retry,
    6,
    { kind: "failed", reason: "gave up after 6 attempts: HTTP 500", disableEndpoint: false },
  ],
  [
    "Retry-After replaces the scheduled wait",
    later,
    2,
    { kind: "retry", delayMs: 42_000, reason: later.reason },
  ],
  [
    "Retry-After on the last attempt still gives up",
    later,
    6,
    { kind: "failed", reason: "gave up after 6 attempts: HTTP 429 with Retry-After", disableEndpoint: false },
  ],
  [
    "give-up is final at once",
    { kind: "give-up", reason: "destination refused" },
    1,
    { kind: "failed", reason: "destination refused", disableEndpoint: false },
  ],
  [
    "410 disables the endpoint",
    { kind: "disable-endpoint", reason: "HTTP 410 Gone" },
    1,
    { kind: "failed", reason: "HTTP 410 Gone", disableEndpoint: true },
  ],
];

describe("decideOutcome", () => {
  test.each(CASES)("%s", (_, result, attempt, expected) => {
    expect(decideOutcome(result, attempt, policy, MID)).toEqual(expected);
  });

  test("6 attempts in all by default", () => expect(maxAttempts(policy)).toBe(6));

  test("a one-entry schedule gives up after the second attempt", () => {
    const short = { schedule: [100], jitter: 0 };
    expect(decideOutcome(retry, 1, short, 0)).toEqual({ kind: "retry", delayMs: 100, reason: "HTTP 500" });
    expect(decideOutcome(retry, 2, short, 0)).toMatchObject({ kind: "failed" });
  });
});

describe("jitter", () => {
  test.each([
    [0, 4_000],
    [0.5, 5_000],
    [0.999999, 6_000],
  ])("draw %p spreads 5 s to %p ms", (random, expected) => {
    expect(jitteredDelay(5_000, 0.2, random)).toBe(expected);
  });

  test("every draw stays within ±20% of the schedule", () => {
    for (let i = 0; i < 1000; i++) {
      const delay = scheduledDelay(policy, 2, Math.random()) as number;
      expect(delay).toBeGreaterThanOrEqual(24_000);
      expect(delay).toBeLessThanOrEqual(36_000);
    }
  });

  test("no scheduled delay past the schedule", () => expect(scheduledDelay(policy, 6, MID)).toBeNull());
});
