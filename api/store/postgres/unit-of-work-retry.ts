/**
 * How a unit of work that failed to serialize is run again: a bounded number
 * of attempts, each after a pause drawn at random below a cap that doubles
 * per failure ("full jitter"), so units that collided do not collide again in
 * step. Pure: the random source is passed in.
 */

export interface RetryPolicy {
  /** Runs of `work` at most, the first included. */
  attempts: number;
  /** The cap of the pause after the first failure, ms; doubled after each further one. */
  baseDelayMs: number;
  /** The cap never grows past this, ms. */
  maxDelayMs: number;
}

/**
 * 20 runs: 12 units racing on one row, each failing but one per round, all commit in the
 * conformance suite's races; the pauses' caps add up to about 1.4 s before the last run.
 */
export const DEFAULT_RETRY: RetryPolicy = { attempts: 20, baseDelayMs: 2, maxDelayMs: 100 };

/** The pause before the next run, after `failures` (≥ 1) failed runs; `random` in [0, 1). */
export function retryDelayMs(failures: number, policy: RetryPolicy, random: () => number): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, failures - 1));
  return random() * cap;
}
