/** The retry policy of the PostgreSQL engine's units of work (unit-of-work-retry.ts): pauses under a doubling cap. */
import { expect, test } from "bun:test";
import { DEFAULT_RETRY, retryDelayMs } from "../../../api/store/postgres/unit-of-work-retry.ts";

const policy = { attempts: 10, baseDelayMs: 2, maxDelayMs: 50 };
const CASES: [failures: number, random: number, delay: number][] = [
  [1, 0, 0],
  [1, 0.5, 1],
  [1, 0.999, 1.998],
  [2, 0.5, 2],
  [3, 0.5, 4],
  [5, 0.5, 16],
  [6, 0.5, 25],
  [40, 0.5, 25],
];

test.each(CASES)("after %d failures, random %d: %d ms", (failures, random, delay) => {
  expect(retryDelayMs(failures, policy, () => random)).toBeCloseTo(delay, 9);
});

test("the default policy's pauses before its last run add up to under two seconds", () => {
  let worst = 0;
  for (let failures = 1; failures < DEFAULT_RETRY.attempts; failures++)
    worst += retryDelayMs(failures, DEFAULT_RETRY, () => 1);
  expect(worst).toBeLessThan(2000);
});
