/**
 * Scenario 8 at test size: a few seconds of paced single-operation mutations,
 * each matched by a webhook: nothing lost, nothing doubled, latency recorded.
 * The 60-second version at 1,000 mutations/s, with its figures written down:
 * `bun bench/faults.ts load`.
 */
import { expect, test } from "bun:test";
import { load } from "../support/flow/load.ts";

test("load: paced mutations for a few seconds, every one delivered", async () => {
  const result = await load({ rate: 300, durationMs: 3000, writers: 8 });
  expect(result.failures).toEqual([]);
  // On a busy machine the writers may fall behind the pace; what matters is that nothing is lost.
  expect(result.writes.acked).toBeGreaterThan(450);
  expect(result.figures.delivered).toBe(result.figures.expected);
}, 120_000);
