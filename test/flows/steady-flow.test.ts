/**
 * Scenario 1 at test size: mixed mutations through the real API, each
 * expected element at the receiver once, signed, with the right body.
 * The long version: `bun bench/faults.ts steady`.
 */
import { expect, test } from "bun:test";
import { steadyFlow } from "../support/flow/steady-flow.ts";

test("steady flow: every committed change arrives once, signed, with the right body", async () => {
  const result = await steadyFlow({ mutations: 150 });
  expect(result.failures).toEqual([]);
  expect(result.figures.delivered).toBe(result.figures.expected);
  expect(result.figures.expected).toBeGreaterThan(100);
  expect(result.figures.duplicates).toBe(0);
}, 60_000);
