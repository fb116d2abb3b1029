/**
 * Scenario 2 at test size: the API SIGKILLed at random moments while
 * writers write; every committed mutation's deliveries still arrive.
 * The long version: `bun bench/faults.ts api-kill`.
 */
import { expect, test } from "bun:test";
import { apiKilled } from "../support/flow/api-killed.ts";

test("API killed mid-stream and restarted: nothing committed is lost", async () => {
  const result = await apiKilled({ durationMs: 4000, kills: 3 });
  expect(result.failures).toEqual([]);
  expect(result.extra.kills).toBe(3);
  expect(result.figures.delivered).toBe(result.figures.expected);
}, 90_000);
