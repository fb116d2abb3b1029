/**
 * The in-memory LIKE matcher: a table of edge cases, agreement with a plain dynamic-programming
 * matcher on many small generated values and patterns, and the hostile patterns that made the old
 * matcher quadratic (run, not timed: a quadratic matcher takes seconds each and the suite's
 * timeout fails it; bench/ holds speed targets).
 */
import { describe, expect, test } from "bun:test";
import { canonicalLikePattern, matchesLike } from "../../api/eql/like-pattern.ts";

/** Written pattern (as in a filter's string) against a value. */
const like = (value: string, written: string) => matchesLike(value, canonicalLikePattern(written));

const CASES: [name: string, value: string, written: string, expected: boolean][] = [
  ["empty pattern, empty value", "", "", true],
  ["empty pattern, a value", "a", "", false],
  ["only %, empty value", "", "%", true],
  ["only %, a value", "abc", "%", true],
  ["%% is %", "abc", "%%", true],
  ["%%% on empty", "", "%%%", true],
  ["literal whole", "abc", "abc", true],
  ["literal shorter value", "ab", "abc", false],
  ["literal longer value", "abcd", "abc", false],
  ["leading %", "xxabc", "%abc", true],
  ["leading % needs the end", "abcx", "%abc", false],
  ["trailing %", "abcxx", "abc%", true],
  ["trailing % needs the start", "xabc", "abc%", false],
  ["both ends %", "xxabcxx", "%abc%", true],
  ["both ends % absent", "xxabxcxx", "%abc%", false],
  ["consecutive %% in the middle", "abXYcd", "ab%%cd", true],
  ["head and tail may not overlap", "aba", "ab%ba", false],
  ["head and tail meet", "abba", "ab%ba", true],
  ["middle segments in order", "a1b2c", "%1%2%", true],
  ["middle segments out of order", "a2b1c", "%1%2%", false],
  ["middle segment before the tail", "xaaa", "%aa%aa", false],
  ["middle segment then tail", "xaaaa", "%aa%aa", true],
  ["leftmost place leaves room", "abcabc", "%abc%abc", true],
  ["KMP restarts inside a partial match", "aabaabaaab", "%aaab%", true],
  ["KMP border", "abababc", "%ababc%", true],
  ["_ is one character", "abc", "a_c", true],
  ["_ is not zero characters", "ac", "a_c", false],
  ["_ is not two characters", "abbc", "a_c", false],
  ["_ alone", "x", "_", true],
  ["_ alone on empty", "", "_", false],
  ["___ needs three", "ab", "___", false],
  ["_ at the start", "xbc", "_bc", true],
  ["_ at the end", "abx", "ab_", true],
  ["_ next to leading %", "abc", "%_c", true],
  ["_% needs one", "", "_%", false],
  ["_% on one", "a", "_%", true],
  ["%_ on one", "a", "%_", true],
  ["%_% on empty", "", "%_%", false],
  ["%_% on one", "z", "%_%", true],
  ["%__% needs two", "z", "%__%", false],
  ["_ on both sides of a middle segment", "xxaybzz", "%_a_b%", true],
  ["_ in a middle segment", "xxaqbxx", "%a_b%", true],
  ["_ in a middle segment, no place", "xxaqqbxx", "%a_b%", false],
  ["_ segment then tail", "a1b2ca", "%1_2%a", true],
  ["_ segment leftmost place", "aXbaYb", "%a_b%a_b", true],
  ["_ segment must end before the tail", "aXb", "%a_b%b", false],
  ["ASCII case folds", "ABC", "abc", true],
  ["ASCII case folds in the pattern", "abc", "AbC", true],
  ["ASCII case folds in a middle segment", "xxABcxx", "%abC%", true],
  ["ASCII case folds in a _ segment", "xxAqCxx", "%a_c%", true],
  ["non-ASCII case does not fold", "É", "é", false],
  ["ß is not ss", "ß", "ss", false],
  ["Kelvin sign is not k", "\u212a", "k", false],
  ["_ is one code point beyond the BMP", "x😀y", "x_y", true],
  ["_ is not one UTF-16 unit", "x😀y", "x__y", false],
  ["emoji literal", "a😀b", "%😀%", true],
  ["emoji in a _ segment", "za😀bz", "%a_b%", true],
  ["a surrogate half does not match the pair", "😀", "\ud83d%", false],
  ["lone surrogate is one character", "a\ud83db", "a_b", true],
  ["lone surrogate literal", "a\ud83db", "%\ud83d%", true],
  ["escaped %", "100%", "100\\%", true],
  ["escaped % is literal", "1000", "100\\%", false],
  ["escaped _", "a_b", "a\\_b", true],
  ["escaped _ is literal", "axb", "a\\_b", false],
  ["escaped backslash", "a\\b", "a\\\\b", true],
  ["escaped % in a middle segment", "x50% offy", "%\\% o%", true],
  ["escaped _ in a _ segment", "xa_bcx", "%a\\__c%", true],
  ["trailing lone backslash", "a\\", "a\\", true],
  ["NUL is a character", "a\0b", "a_b", true],
  ["newline is a character", "line\nbreak", "%e_b%", true],
];

describe("matchesLike", () => {
  test.each(CASES)("%s", (_name, value, written, expected) => {
    expect(like(value, written)).toBe(expected);
  });
});

/** The plain O(value × pattern) dynamic program over code points, for comparison. */
function referenceLike(value: string, canonical: string): boolean {
  type Part = { any: true } | { any: false; code: number | null };
  const parts: Part[] = [];
  const chars = [...canonical];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    if (ch === "%") parts.push({ any: true });
    else if (ch === "_") parts.push({ any: false, code: null });
    else
      parts.push({ any: false, code: fold((ch === "\\" ? (chars[++i] ?? "\\") : ch).codePointAt(0) ?? 0) });
  }
  const codes = Array.from(value, (ch) => fold(ch.codePointAt(0) ?? 0));
  let row = [true, ...codes.map(() => false)];
  for (const part of parts) {
    const next = row.map(() => false);
    for (let v = 0; v <= codes.length; v++) {
      if (part.any) next[v] = row[v] || (v > 0 && next[v - 1]) || false;
      else if (v > 0) next[v] = (row[v - 1] && (part.code === null || part.code === codes[v - 1])) || false;
    }
    row = next;
  }
  return row[codes.length] ?? false;
}

const fold = (code: number) => (code >= 65 && code <= 90 ? code + 32 : code);

/** A small deterministic generator (mulberry32). */
function randomOf(seed: number) {
  let state = seed;
  return (n: number) => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (((t ^ (t >>> 14)) >>> 0) % n) as number;
  };
}

// Short patterns over a mixed alphabet, and long ones over two letters (segments past 32 characters,
// so more than one word of Shift-And state, with many partial matches).
const GENERATED = [
  { count: 20_000, values: 12, patterns: 8, alphabet: ["a", "A", "b", "😀", "é"] },
  { count: 2_000, values: 120, patterns: 90, alphabet: ["a", "a", "a", "B"] },
];

test.each(GENERATED)("agrees with the dynamic program ($count values and patterns)", (shape) => {
  const random = randomOf(20240501);
  const tokens = [...shape.alphabet, "%", "_", "_", "\\%", "\\_", "%%"];
  for (let n = 0; n < shape.count; n++) {
    const value = Array.from(
      { length: random(shape.values) },
      () => shape.alphabet[random(shape.alphabet.length)],
    );
    const written = Array.from({ length: random(shape.patterns) }, () => tokens[random(tokens.length)]).join(
      "",
    );
    const canonical = canonicalLikePattern(written);
    for (const text of [value.join(""), `${value.join("")}${written.replace(/[%_\\]/g, "")}`]) {
      if (matchesLike(text, canonical) !== referenceLike(text, canonical))
        throw new Error(`${JSON.stringify(text)} LIKE ${written}`);
    }
  }
});

test("hostile patterns are decided in one pass each", () => {
  // The defect's probe: 9,960 a's then b after %, against 40,000 a's; and the longest textarea. One
  // test for all: the old matcher took 0.5 to 2.7 s for each, far past the timeout in all.
  const a40k = "a".repeat(40_000);
  const aMax = "a".repeat(131_072);
  const cases: [string, string, string, boolean][] = [
    ["%a×9960b at the end", a40k, `%${"a".repeat(9_960)}b`, false],
    ["%a×9960b% in the middle", a40k, `%${"a".repeat(9_960)}b%`, false],
    ["%a×9960% in the middle, found", a40k, `%${"a".repeat(9_960)}%`, true],
    ["%(a_)×4980b at the end", a40k, `%${"a_".repeat(4_980)}b`, false],
    ["%(a_)×4980b% in the middle", a40k, `%${"a_".repeat(4_980)}b%`, false],
    ["%(a_)×4980% in the middle, found", a40k, `%${"a_".repeat(4_980)}%`, true],
    ["(%a)×4995%b, many segments", aMax, `${"%a".repeat(4_995)}%b`, false],
    ["%a×9990b% against the longest textarea", aMax, `%${"a".repeat(9_990)}b%`, false],
    ["%(a_)×4995b% against the longest textarea", aMax, `%${"a_".repeat(4_995)}b%`, false],
    ["_-headed segments", aMax, `%${"_".repeat(4_995)}b%`, false],
  ];
  for (const [name, value, written, expected] of cases) {
    expect([name, like(value, written)]).toEqual([name, expected]);
    expect([name, like(`${value}b`, written)]).toEqual([name, true]);
  }
});
