/**
 * What the delivery scenarios of issue 9 share. Each scenario is one function
 * over a scale in a file of its own (steady-flow.ts, api-killed.ts,
 * dispatcher-killed.ts, redis-outage.ts, receiver-outage.ts, fuzz.ts,
 * isolation.ts, load.ts): the default test suite runs them small
 * (test/flows/), `bun bench/faults.ts` runs them long and writes the figures
 * down. A scenario starts the real processes, does its damage while writers
 * write, waits for the deliveries to settle and returns its figures and, in
 * words, whatever did not hold.
 */
import type { DeliveryFigures } from "./delivery-check.ts";
import { type Flow, type FlowOptions, openFlow, type SettledFigures } from "./flow.ts";
import type { WriteRun } from "./write-run.ts";

/** What a scenario returns: its figures and, in words, what it did and what did not hold. */
export interface ScenarioResult {
  name: string;
  /** What was done, in words (counts of kills, outage lengths, settings). */
  setup: string;
  writes: WriteRun;
  figures: SettledFigures;
  /** Further figures of this scenario (memory, attempts seen in the log, ...). */
  extra: Record<string, number | string>;
  /** What did not hold; empty when the scenario passed. */
  failures: string[];
}

/** Quick retries and quick takeover of a killed dispatcher's jobs, so scenarios settle in seconds. */
export const FAST_DISPATCHER_ENV = {
  DELIVERY_RETRY_SCHEDULE: "200ms,400ms,800ms,1600ms,3200ms",
  DISPATCH_LOCK_MS: "1000",
};

/** The delivery guarantee, checked on the figures; `duplicatesAllowed` for scenarios that force retries. */
export function guaranteeFailures(
  writes: WriteRun,
  figures: DeliveryFigures & { unfinished?: number },
  { duplicatesAllowed = false } = {},
): string[] {
  const failures: string[] = [];
  if ((figures.unfinished ?? 0) > 0)
    failures.push(`${figures.unfinished} deliveries not succeeded in the delivery log`);
  if (writes.rejected.length > 0)
    failures.push(`${writes.rejected.length} mutations refused: ${writes.rejected[0]?.slice(0, 300)}`);
  if (figures.lost > 0) failures.push(`${figures.lost} expected deliveries never arrived`);
  if (figures.unexpected > 0) failures.push(`${figures.unexpected} deliveries nobody expected`);
  if (figures.badSignatures > 0) failures.push(`${figures.badSignatures} bad signatures`);
  if (figures.badTimestamps > 0) failures.push(`${figures.badTimestamps} bad timestamps`);
  if (!duplicatesAllowed && figures.duplicates > 0) failures.push(`${figures.duplicates} duplicate requests`);
  if (failures.length > 0) failures.push(...figures.problems);
  return failures;
}

/** Opens a flow, runs `run` on it and closes it; a failure carries the tail of both processes' output. */
export async function withFlow<T>(options: FlowOptions, run: (flow: Flow) => Promise<T>): Promise<T> {
  const flow = await openFlow(options);
  try {
    return await run(flow);
  } catch (error) {
    const tail = (text: string) => text.slice(-3000);
    throw new Error(
      `${error instanceof Error ? error.stack : error}\n-- api:\n${tail(flow.service.api.output())}\n-- dispatcher:\n${tail(flow.service.dispatcher.output())}`,
    );
  } finally {
    await flow.close();
  }
}
