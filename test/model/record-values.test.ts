/** sameValue: the one test of "did this field change" shared by mutations and the webhook matcher. */
import { describe, expect, test } from "bun:test";
import { type FieldValue, sameValue } from "../../api/model/record-values.ts";

const cases: [FieldValue, FieldValue, boolean][] = [
  [null, null, true],
  ["a", "a", true],
  ["a", "b", false],
  [1, 1, true],
  [1, "1", false],
  [true, true, true],
  [false, null, false],
  [["a", "b"], ["a", "b"], true],
  [["a", "b"], ["b", "a"], false],
  [["a"], ["a", "b"], false],
  [[], [], true],
  [[], null, false],
  [["a"], "a", false],
];

describe("sameValue", () => {
  test.each(cases)("%j vs %j → %p", (a, b, same) => {
    expect(sameValue(a, b)).toBe(same);
    expect(sameValue(b, a)).toBe(same);
  });
});
