/** A deferred webhook's due time (api/feed/due-time.ts): a table of records and rules. */
import { describe, expect, test } from "bun:test";
import { type DueRule, delayUntil, dueTimeOf } from "../../api/feed/due-time.ts";
import type { RecordValues } from "../../api/model/record-values.ts";

const T = Date.UTC(2030, 0, 1, 12, 0, 0);

describe("dueTimeOf", () => {
  test.each<[string, RecordValues, DueRule, number | null]>([
    ["a fixed offset", { Start: T }, { field: "Start", offset: 2000 }, T + 2000],
    [
      "a negative offset (before the instant)",
      { Start: T },
      { field: "Start", offset: -3_600_000 },
      T - 3_600_000,
    ],
    ["no offset", { Start: T }, { field: "Start", offset: 0 }, T],
    ["an empty instant: never due", { Start: null }, { field: "Start", offset: 2000 }, null],
    ["a missing instant: never due", {}, { field: "Start", offset: 2000 }, null],
    [
      "an Int offset field, read as ms",
      { Start: T, Lead: 1500 },
      { field: "Start", offset: { field: "Lead", type: "int" } },
      T + 1500,
    ],
    [
      "a negative Int offset field",
      { Start: T, Lead: -1500 },
      { field: "Start", offset: { field: "Lead", type: "int" } },
      T - 1500,
    ],
    [
      "a Decimal offset field, read as ms (truncated)",
      { Start: T, Lead: "2500.9" },
      { field: "Start", offset: { field: "Lead", type: "decimal" } },
      T + 2500,
    ],
    [
      "a Duration offset field (minutes)",
      { Start: T, Duration: 30 },
      { field: "Start", offset: { field: "Duration", type: "duration" } },
      T + 30 * 60_000,
    ],
    [
      "an empty offset field takes the default",
      { Start: T, Lead: null },
      { field: "Start", offset: { field: "Lead", type: "int", default: 7000 } },
      T + 7000,
    ],
    [
      "an empty offset field without a default: never due",
      { Start: T, Lead: null },
      { field: "Start", offset: { field: "Lead", type: "int" } },
      null,
    ],
    [
      "a Decimal that is not a number takes the default",
      { Start: T, Lead: "x" },
      { field: "Start", offset: { field: "Lead", type: "decimal", default: 1 } },
      T + 1,
    ],
    [
      "a set offset field wins over the default",
      { Start: T, Lead: 0 },
      { field: "Start", offset: { field: "Lead", type: "int", default: 9 } },
      T,
    ],
  ])("%s", (_, values, rule, due) => expect(dueTimeOf(values, rule)).toBe(due));
});

describe("delayUntil", () => {
  test.each<[number, number, number]>([
    [T + 2000, T, 2000],
    [T, T, 0],
    // A record inserted with a due time in the past fires at once.
    [T - 60_000, T, 0],
  ])("due %p at %p → %p ms", (due, now, delay) => expect(delayUntil(due, now)).toBe(delay));
});
