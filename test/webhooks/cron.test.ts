/**
 * The scheduled webhook's cron check (common/cron.ts): a table of expressions and the problem each
 * has, by position; and, on generated expressions, that it accepts exactly what BullMQ's job
 * scheduler can schedule (its own next-tick arithmetic, cron-parser's rules).
 */
import { describe, expect, test } from "bun:test";
import { getNextMillis } from "bullmq";
import { checkCron } from "../../common/cron.ts";

const expectValid = (text: string, allowSeconds = false) =>
  expect(checkCron(text, { allowSeconds }).problems).toEqual([]);
const expectProblem = (text: string, position: number, message: RegExp, allowSeconds = false) => {
  const { cron, problems } = checkCron(text, { allowSeconds });
  expect(cron).toBeNull();
  expect(problems[0]?.position).toBe(position);
  expect(problems[0]?.message).toMatch(message);
};

describe("checkCron", () => {
  test.each([
    "* * * * *",
    "0 9 * * 1-5",
    "*/15 * * * *",
    "0,30 8-18/2 1 1,6,12 0",
    "59 23 31 12 7",
    "  5   4 * * *  ",
  ])("accepts %p", (text) => expectValid(text));

  test("normalises spacing", () => {
    expect(checkCron("  5   4 * * *  ").cron).toEqual({ expression: "5 4 * * *", fieldCount: 5 });
  });

  test.each<[string, number, RegExp]>([
    ["", 0, /expected 5 fields.*found 0/],
    ["* * * *", 7, /found 4/],
    // A sixth field (seconds) is refused unless the operator allows it: the smallest interval is a minute.
    ["*/5 * * * * *", 12, /found 6/],
    ["60 * * * *", 0, /minute: 60 is out of range 0-59/],
    ["* 24 * * *", 2, /hour: 24 is out of range 0-23/],
    ["* * 0 * *", 4, /day of month: 0 is out of range 1-31/],
    ["* * * 13 *", 6, /month: 13 is out of range 1-12/],
    ["* * * * 8", 8, /day of week: 8 is out of range 0-7/],
    ["* * * JAN *", 6, /month: 'JAN' is not a number/],
    ["5-1 * * * *", 0, /range 5-1 goes backwards/],
    ["1-70 * * * *", 2, /minute: 70 is out of range/],
    ["*/0 * * * *", 2, /step '0'/],
    ["1,,2 * * * *", 2, /empty list item/],
    ["1,2,x * * * *", 4, /'x' is not a number/],
    ["1/2/3 * * * *", 0, /more than one '\/'/],
    ["? * * * *", 0, /'\?' is not a number/],
  ])("refuses %p at position %p", (text, position, message) => expectProblem(text, position, message));

  test("with seconds allowed (tests), a leading seconds field is accepted and checked", () => {
    expectValid("*/2 * * * * *", true);
    expect(checkCron("*/2 * * * * *", { allowSeconds: true }).cron?.fieldCount).toBe(6);
    expectProblem("61 * * * * *", 0, /second: 61 is out of range 0-59/, true);
    expectProblem("* * * * * * *", 12, /or 6 \(seconds first\), found 7/, true);
  });

  test.each<[string, number, RegExp]>([
    // cron-parser refuses a value listed twice; BullMQ would throw after the webhook was stored.
    ["1,1 * * * *", 2, /^minute: 1 listed more than once$/],
    ["1-59/1,0,1,2,3 * * * *", 9, /^minute: 1-3 listed more than once$/],
    ["* 0-12,12 * * *", 7, /^hour: 12 listed more than once$/],
    ["0 0 * * 0,7", 10, /^day of week: 0 listed more than once \(0 and 7 are both Sunday\)$/],
    ["0 0 * * 5-7,0", 12, /day of week: 0 listed more than once/],
    // A day of the month no listed month has, while the day of week is \`*\`: never a tick.
    ["0 0 30 2 *", 4, /^day of month: day 30 never occurs in February$/],
    ["0 0 31 4 *", 4, /^day of month: day 31 never occurs in April$/],
    ["0 0 30,31 2 *", 4, /^day of month: days 30-31 never occur in February$/],
    ["0 0 31 2,4 *", 4, /^day of month: day 31 never occurs in February or April$/],
  ])("refuses %p at position %p (BullMQ cannot schedule it)", (text, position, message) =>
    expectProblem(text, position, message),
  );

  test.each([
    // 0-7 is every day once; a weekday rescues an impossible day of the month (they combine with OR).
    "0 0 * * 0-7",
    "0 0 * * 7",
    "0 0 29 2 *",
    "0 0 1,31 2 *",
    "0 0 31 2 1",
    "0 0 31 1-2 *",
    "0,30 */2 * * 1-5",
  ])("accepts %p (BullMQ schedules it)", (text) => expectValid(text));

  test("accepts only what BullMQ's job scheduler can schedule, refuses only that (generated expressions)", () => {
    // A seeded generator (mulberry32): the same expressions every run.
    let seed = 0x5eed;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
    // Narrow ranges make repeats and impossible days frequent.
    const item = (min: number, max: number): string => {
      const a = pick(min, max);
      const b = pick(a, max);
      const step = random() < 0.3 ? `/${pick(1, Math.min(max, 8))}` : "";
      const kind = random();
      if (kind < 0.15) return `*${step}`;
      if (kind < 0.45) return `${a}-${b}${step}`;
      return `${a}${step}`;
    };
    const field = (min: number, max: number, starProbability: number) =>
      random() < starProbability ? "*" : Array.from({ length: pick(1, 3) }, () => item(min, max)).join(",");
    const from = Date.UTC(2026, 0, 1);
    const disagreements: string[] = [];
    for (let i = 0; i < 4000; i++) {
      const text = [
        field(0, 5, 0.2),
        field(0, 3, 0.3),
        field(27, 31, 0.2),
        field(1, 12, 0.2),
        field(0, 7, 0.7),
      ].join(" ");
      let schedulable: boolean;
      try {
        schedulable = getNextMillis(from, { pattern: text, tz: "UTC" }) !== undefined;
      } catch {
        schedulable = false;
      }
      const { cron, problems } = checkCron(text);
      const accepted = cron !== null;
      // Stricter on purpose: with one month, cron-parser drops the days it lacks before looking for
      // repeats (\`*,30,30 2 *\` passes); a day listed twice is refused here whatever the month.
      const repeatedDay = problems.every((p) => /^day of month: .* listed more than once$/.test(p.message));
      if (accepted !== schedulable && !(schedulable && repeatedDay))
        disagreements.push(`${text}: accepted ${accepted}, schedulable ${schedulable}`);
    }
    expect(disagreements).toEqual([]);
  });

  test("every problem is told at once", () => {
    expect(checkCron("60 25 * * *").problems.map((p) => p.position)).toEqual([0, 3]);
  });
});
