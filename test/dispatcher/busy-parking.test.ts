import { describe, expect, test } from "bun:test";
import { createBusyParking, type Parked, parkAtBusyEndpoint } from "../../dispatcher/busy-parking.ts";

const rules = { busyDelayMs: 1_000, maxMs: 60_000, limit: 8 };
const NOW = 1_000_000;
const MID = 0.5; // a random draw that lands on the base wait itself

type Case = [string, number | undefined, number, number, Parked];
const CASES: Case[] = [
  ["first refusal waits the busy delay", undefined, 0, MID, { delayMs: 1_000, lastReturnAt: NOW + 1_000 }],
  ["jittered by ±50%: low end", undefined, 0, 0, { delayMs: 500, lastReturnAt: NOW + 500 }],
  [
    "slots held longer: waits as long",
    undefined,
    10_000,
    MID,
    { delayMs: 10_000, lastReturnAt: NOW + 10_000 },
  ],
  [
    "queues behind the last parked job, hold ÷ limit later",
    NOW + 30_000,
    10_000,
    MID,
    { delayMs: 31_250, lastReturnAt: NOW + 31_250 },
  ],
  [
    "a queue already due does not delay it",
    NOW - 5_000,
    10_000,
    MID,
    { delayMs: 10_000, lastReturnAt: NOW + 10_000 },
  ],
  [
    "past the longest wait: the second half of it, the queue unmoved",
    NOW + 59_500,
    10_000,
    0,
    { delayMs: 30_000, lastReturnAt: NOW + 59_500 },
  ],
  [
    "a hold longer than the longest wait is cut to it",
    undefined,
    600_000,
    MID,
    { delayMs: 60_000, lastReturnAt: NOW + 60_000 },
  ],
];

describe("parkAtBusyEndpoint", () => {
  test.each(CASES)("%s", (_, last, heldFor, random, expected) => {
    expect(parkAtBusyEndpoint(last, NOW, heldFor, rules, random)).toEqual(expected);
  });

  test("a hanging endpoint's backlog comes back at the rate it answers, within the longest wait", () => {
    const parking = createBusyParking(rules, () => NOW, Math.random);
    // 1,000 jobs refused within a moment while the endpoint's 8 slots have been held for 10 s.
    const waits = Array.from({ length: 1_000 }, () => parking.park("slow:443", 10_000));
    const due = (ms: number) => waits.filter((wait) => wait <= ms).length;
    // 8 per 10 s, after the first wait of 5–15 s: at most ~8 come back per 10 s of the next minute.
    expect(due(20_000)).toBeLessThanOrEqual(16);
    expect(due(30_000)).toBeLessThanOrEqual(24);
    expect(Math.max(...waits)).toBeLessThanOrEqual(60_000);
    // Other endpoints queue on their own.
    expect(parking.park("fast:443", 5)).toBeLessThanOrEqual(1_500);
  });

  test("remembers a bounded number of endpoints: past it, the oldest queue is forgotten", () => {
    let now = NOW;
    const parking = createBusyParking(
      rules,
      () => now,
      () => MID,
    );
    for (let i = 0; i < 5_000; i++) parking.park(`e${i}:443`, 10_000);
    // e0's queue was forgotten: a second job there waits as a first one does, not hold ÷ limit behind it.
    expect(parking.park("e0:443", 10_000)).toBe(10_000);
    // e4999's is remembered.
    expect(parking.park("e4999:443", 10_000)).toBe(11_250);
    now += 1;
    expect(parking.park("e4999:443", 10_000)).toBe(12_499);
  });
});
