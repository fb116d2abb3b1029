/**
 * Admissions taken from Redis ahead of need, so a busy token does not cost a
 * Redis round trip per request. A process asks Redis (redis-rate-limiter.ts)
 * for up to `size` admissions of a token at once and hands them out locally
 * until they run out or lapse; the limits still hold across processes, since
 * Redis counted every admission a process holds as taken. What a process
 * holds and does not use lapses unused: capacity lost, never capacity given
 * twice. To keep that loss small the size adapts per token: 1 at first (the
 * exact per-request behaviour, and always for buckets of fewer than 32), doubled each time
 * a reservation is used up before it lapses, cut back to what was used when it
 * lapses with admissions left. A refusal is kept until the bucket would admit
 * again (only time refills a bucket; other processes only take from it), so a
 * token flooding while refused costs Redis nothing more. Pure: the clock is
 * passed in.
 */
import type { BucketReading, BucketReadings, RateLimitRules } from "./rate-limiter.ts";

/** How long admissions held by a process stay usable, ms. */
export const RESERVATION_LIFETIME_MS = 200;

/** What a process knows of one token's buckets. */
export interface Reservation {
  /** Admissions held, not handed out yet. */
  left: number;
  /** When those lapse (ms). */
  until: number;
  /** Redis's last readings, as they stood after it granted (or refused) at `at`. */
  readings: BucketReadings | null;
  at: number;
  /** Admissions to ask for next time. */
  size: number;
  /** Admissions handed out from the current reservation. */
  used: number;
  /** Until when Redis's refusal stands (ms; 0: none). */
  refusedUntil: number;
}

export const newReservation = (): Reservation => ({
  left: 0,
  until: 0,
  readings: null,
  at: 0,
  size: 1,
  used: 0,
  refusedUntil: 0,
});

/** The most admissions a process asks for at once: a 32nd of the smaller bucket that is on, 1 to 64. */
export function largestReservation(rules: RateLimitRules): number {
  const bursts = [rules.token, rules.tenant].filter((rule) => rule.perSecond > 0).map((rule) => rule.burst);
  return Math.max(1, Math.min(64, Math.floor(Math.min(...bursts) / 32)));
}

const aged = (reading: BucketReading | null, elapsed: number, extra: number): BucketReading | null =>
  reading && {
    remaining: reading.remaining + extra,
    fullInMs: Math.max(0, reading.fullInMs - elapsed),
    retryInMs: reading.retryInMs > 0 ? Math.max(1, reading.retryInMs - elapsed) : 0,
  };

/**
 * One admission (or the standing refusal) from what the process holds, or null when Redis must be
 * asked. An admission's readings count what the process still holds as remaining.
 */
export function takeHeld(state: Reservation, now: number): BucketReadings | null {
  const readings = state.readings;
  if (readings === null) return null;
  const elapsed = now - state.at;
  if (state.left > 0 && now < state.until) {
    state.left--;
    state.used++;
    return {
      token: aged(readings.token, elapsed, state.left),
      tenant: aged(readings.tenant, elapsed, state.left),
    };
  }
  if (now < state.refusedUntil)
    return { token: aged(readings.token, elapsed, 0), tenant: aged(readings.tenant, elapsed, 0) };
  return null;
}

/** How many admissions to ask Redis for now, at most `largest`. */
export function sizeToAsk(state: Reservation, now: number, largest: number): number {
  const usedUp = state.left === 0 && state.used >= state.size;
  if (usedUp) return Math.min(largest, state.size * 2);
  // Lapsed with some left (or refused): ask for what the last one served.
  if (state.until <= now && state.left > 0) return Math.min(largest, Math.max(1, state.used));
  return Math.min(largest, state.size);
}

/**
 * Notes Redis's answer to a request for `asked` admissions: `granted` of them (0: refused), one of
 * which is the caller's. Returns the caller's readings.
 */
export function noteGrant(
  state: Reservation,
  answer: { readings: BucketReadings; granted: number },
  asked: number,
  now: number,
): BucketReadings {
  const { readings, granted } = answer;
  state.readings = readings;
  state.at = now;
  state.size = asked;
  if (granted === 0) {
    const waits = [readings.token, readings.tenant].map((reading) => reading?.retryInMs ?? 0);
    state.left = 0;
    state.used = 0;
    state.refusedUntil = now + Math.max(...waits);
    return readings;
  }
  // What is still held and usable is kept (a grant never takes away what an earlier one gave).
  state.left = (now < state.until ? state.left : 0) + granted - 1;
  state.used = 1;
  state.until = now + RESERVATION_LIFETIME_MS;
  state.refusedUntil = 0;
  return { token: aged(readings.token, 0, state.left), tenant: aged(readings.tenant, 0, state.left) };
}
