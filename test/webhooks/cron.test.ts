/** The scheduled webhook's cron check (common/cron.ts): a table of expressions and the problem each has, by position. */
import { describe, expect, test } from "bun:test";
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

  test("every problem is told at once", () => {
    expect(checkCron("60 25 * * *").problems.map((p) => p.position)).toEqual([0, 3]);
  });
});
