/**
 * The retry policy: a ResponseClass, the attempt number and a random draw in;
 * the DeliveryOutcome out — delivered, retry after a jittered delay, or failed
 * for good. Pure.
 */
import type { ResponseClass } from "./classify-response.ts";

export interface RetryPolicy {
  /** Waits before retries 1, 2, ...; a delivery makes at most `schedule.length + 1` attempts. */
  schedule: readonly number[];
  /** Each wait is drawn uniformly from `delay × [1 - jitter, 1 + jitter]`. */
  jitter: number;
}

/** The default schedule of SPEC §8: 5 s, 30 s, 5 min, 30 min, 3 h (6 attempts in all). */
export const DEFAULT_RETRY_SCHEDULE_MS = [5_000, 30_000, 300_000, 1_800_000, 10_800_000] as const;

/** Fraction by which each scheduled wait is spread, so retries of many deliveries do not arrive together. */
export const RETRY_JITTER = 0.2;

export type DeliveryOutcome =
  | { kind: "succeeded" }
  | { kind: "retry"; delayMs: number; reason: string }
  /** Final. `disableEndpoint`: the webhook is to be disabled with `reason`. */
  | { kind: "failed"; reason: string; disableEndpoint: boolean };

/** Attempts a delivery may make under `policy`. */
export function maxAttempts(policy: RetryPolicy): number {
  return policy.schedule.length + 1;
}

/** `baseMs` spread by the policy's jitter; `random` is a draw from [0, 1). */
export function jitteredDelay(baseMs: number, jitter: number, random: number): number {
  return Math.max(0, Math.round(baseMs * (1 - jitter + 2 * jitter * random)));
}

/**
 * The wait before the next try after failed attempt `attempt` (1-based), or
 * null when the schedule is exhausted.
 */
export function scheduledDelay(policy: RetryPolicy, attempt: number, random: number): number | null {
  const base = policy.schedule[attempt - 1];
  return base === undefined ? null : jitteredDelay(base, policy.jitter, random);
}

/**
 * Decides what follows attempt `attempt` (1-based) that ended as `result`.
 * A Retry-After wait replaces the scheduled one but still spends an attempt;
 * after the last attempt any failure is final.
 */
export function decideOutcome(
  result: ResponseClass,
  attempt: number,
  policy: RetryPolicy,
  random: number,
): DeliveryOutcome {
  switch (result.kind) {
    case "delivered":
      return { kind: "succeeded" };
    case "give-up":
      return { kind: "failed", reason: result.reason, disableEndpoint: false };
    case "disable-endpoint":
      return { kind: "failed", reason: result.reason, disableEndpoint: true };
    case "retry":
    case "retry-after": {
      const scheduled = scheduledDelay(policy, attempt, random);
      if (scheduled === null) {
        const reason = `gave up after ${attempt} attempt${attempt > 1 ? "s" : ""}: ${result.reason}`;
        return { kind: "failed", reason, disableEndpoint: false };
      }
      const delayMs = result.kind === "retry-after" ? result.delayMs : scheduled;
      return { kind: "retry", delayMs, reason: result.reason };
    }
  }
}
