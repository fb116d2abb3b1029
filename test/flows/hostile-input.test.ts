/**
 * Scenario 6 at test size: a seeded fuzz run over every endpoint and GraphQL
 * argument against the real API process: no 5xx, no hang, no internals in
 * answers, and the same process answers normally afterwards.
 * The long version: `bun bench/faults.ts fuzz`.
 */
import { expect, test } from "bun:test";
import { fuzz } from "../support/flow/fuzz.ts";

test("hostile input: no 500, no crash, no hang; the service answers normally afterwards", async () => {
  // A different seed each run widens what the suite covers over time; a failure prints its seed.
  const seed = Math.floor(Math.random() * 2 ** 31);
  const result = await fuzz({ requests: 1500, seed });
  expect({ seed, failures: result.failures }).toEqual({ seed, failures: [] });
  expect(result.extra["API process afterwards"]).toBe("same process, healthy");
}, 60_000);
