import { describe, expect, test } from "bun:test";
import { nestsDeeperThan } from "../../../api/graphql/document-nesting.ts";

describe("nestsDeeperThan", () => {
  test("counts every kind of bracket, up to and past the limit", () => {
    expect(nestsDeeperThan("{ a(b: [{ c: 1 }]) }", 4)).toBe(false);
    expect(nestsDeeperThan("{ a(b: [{ c: [1] }]) }", 4)).toBe(true);
    expect(nestsDeeperThan(`${"[".repeat(3)}${"]".repeat(3)}[[[]]]`, 3)).toBe(false);
  });

  test("skips strings, escaped quotes, block strings and comments", () => {
    expect(nestsDeeperThan(`{ a(s: "[[[[\\"[[[[") }`, 2)).toBe(false);
    expect(nestsDeeperThan(`{ a(s: """ [[[[ \\""" [[[[ """) }`, 2)).toBe(false);
    expect(nestsDeeperThan("# [[[[\n{ a }", 1)).toBe(false);
    // After a string or comment, brackets count again.
    expect(nestsDeeperThan(`{ a(s: "x", t: [[1]]) }`, 3)).toBe(true);
    expect(nestsDeeperThan("# x\n{ a(t: [[1]]) }", 3)).toBe(true);
  });

  test("an unterminated string ends at its line, as the parser reports it", () => {
    expect(nestsDeeperThan(`{ a(s: "[[[[\n[[[[`, 3)).toBe(true);
  });
});
