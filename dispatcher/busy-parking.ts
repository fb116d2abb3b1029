/**
 * When a job refused at a busy endpoint comes back. An endpoint at its limit
 * takes about `limit` deliveries per hold time (how long its slots have been
 * held), so the jobs refused there get return times spaced by hold ÷ limit,
 * each after the one before: a hanging endpoint's backlog comes back at the
 * rate it can take, not all of it every hold time at the other endpoints'
 * expense. A job waits at least about the busy delay or the hold time,
 * whichever is longer (±50%), and at most `maxMs`: an endpoint that recovers
 * gets its backlog within that.
 */
import { setNewest } from "../common/bounded-map.ts";

export interface ParkingRules {
  /** Shortest wait, before jitter. */
  busyDelayMs: number;
  /** Longest wait. */
  maxMs: number;
  /** Deliveries in flight to one endpoint. */
  limit: number;
}

export interface Parked {
  delayMs: number;
  /** When the latest job parked at this endpoint comes back: where the next one queues up. */
  lastReturnAt: number;
}

/**
 * Parks one refused job. `lastReturnAt` is the endpoint's previous answer (undefined when none);
 * `heldForMs` how long the endpoint's oldest slot has been held; `random` a draw from [0, 1).
 */
export function parkAtBusyEndpoint(
  lastReturnAt: number | undefined,
  now: number,
  heldForMs: number,
  rules: ParkingRules,
  random: number,
): Parked {
  const base = Math.min(Math.max(rules.busyDelayMs, heldForMs), rules.maxMs);
  const earliest = now + Math.round(base * (0.5 + random));
  const queued = lastReturnAt === undefined ? earliest : lastReturnAt + heldForMs / rules.limit;
  const returnAt = Math.max(earliest, queued);
  if (returnAt - now <= rules.maxMs) return { delayMs: returnAt - now, lastReturnAt: returnAt };
  // Past the longest wait: spread over its second half; the queue stays where it was.
  return { delayMs: Math.round(rules.maxMs * (0.5 + random / 2)), lastReturnAt: lastReturnAt ?? now };
}

/** Endpoints remembered at most; past it, those whose parked jobs are all due are forgotten first. */
const REMEMBERED = 4096;

/** The parking of one dispatcher process: each endpoint's queue of return times. */
export function createBusyParking(rules: ParkingRules, now: () => number, random: () => number) {
  const lastReturn = new Map<string, number>();
  return {
    /** The wait for a job refused at `endpoint`, whose oldest slot here has been held `heldForMs`. */
    park(endpoint: string, heldForMs: number): number {
      const at = now();
      if (lastReturn.size >= REMEMBERED) {
        for (const [key, when] of lastReturn) if (when <= at) lastReturn.delete(key);
      }
      const parked = parkAtBusyEndpoint(lastReturn.get(endpoint), at, heldForMs, rules, random());
      // Still full: the endpoint parked at least recently goes (its jobs then queue afresh).
      setNewest(lastReturn, endpoint, parked.lastReturnAt, REMEMBERED);
      return parked.delayMs;
    },
  };
}
