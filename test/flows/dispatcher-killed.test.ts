/**
 * Scenario 3 at test size: the dispatcher SIGKILLed while a slow receiver
 * holds deliveries in flight, then restarted; every delivery completes.
 * The long version: `bun bench/faults.ts dispatcher-kill`.
 */
import { expect, test } from "bun:test";
import { dispatcherKilled } from "../support/flow/dispatcher-killed.ts";

test("dispatcher killed mid-delivery and restarted: every delivery completes", async () => {
  const result = await dispatcherKilled({
    // Enough deliveries for both kills: with 60 (0.75 s of a restarted dispatcher's slots), a faster
    // dispatcher had delivered everything before the second kill.
    mutations: 200,
    kills: 2,
    answerMs: 200,
    // A killed dispatcher's endpoint slots come back when their leases expire (within 5 s): here the
    // endpoint has room for more than one dispatcher's worth of deliveries, so the restart need not wait.
    dispatcherEnv: { DISPATCH_CONCURRENCY: "16", DELIVERY_ENDPOINT_CONCURRENCY: "64" },
  });
  expect(result.failures).toEqual([]);
  expect(result.figures.unfinished).toBe(0);
  expect(result.figures.duplicates).toBeGreaterThan(0); // the requests in flight at the kills, sent again
  // Each of those is in the delivery log as an attempt of unknown outcome; no request is missing from it.
  expect(result.extra["requests at the receiver not in the delivery log"]).toBe(0);
  expect(
    result.extra["attempts of unknown outcome in the log (left in flight by the kills)"],
  ).toBeGreaterThan(0);
}, 60_000);
