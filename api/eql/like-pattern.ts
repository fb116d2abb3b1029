/**
 * LIKE patterns. A written pattern is canonicalised once (by the checker) so
 * every back end reads the same thing: `%` any run of characters, `_` exactly
 * one character (a Unicode code point), `\` escaping only `%`, `_` and `\`.
 * Matching folds ASCII letters only (A-Z = a-z), exactly as SQLite's built-in
 * LIKE does; other characters must match exactly.
 */
import { ANY_ONE, findLikeSegment, isSegmentAt } from "./find-like-segment.ts";

/**
 * A written pattern → canonical form. In the written form a backslash makes
 * the next character literal (`\%`, `\_`, `\\`, and also `\a` = `a`); a
 * trailing lone backslash is a literal backslash.
 */
export function canonicalLikePattern(written: string): string {
  let canonical = "";
  const chars = [...written];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    if (ch === "\\") {
      const literal = chars[i + 1] ?? "\\";
      canonical += "%_\\".includes(literal) ? `\\${literal}` : literal;
      i++;
    } else canonical += ch;
  }
  return canonical;
}

/**
 * A canonical pattern → its segments between `%`s, folded: `a%b_c%%d` → [a], [b, _, c], [], [d];
 * a leading or trailing `%` gives an empty first or last segment, a pattern without `%` one segment.
 */
function segmentsOf(canonical: string): Int32Array[] {
  const segments: Int32Array[] = [];
  let segment: number[] = [];
  const chars = [...canonical];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    if (ch === "%") {
      segments.push(Int32Array.from(segment));
      segment = [];
    } else if (ch === "_") segment.push(ANY_ONE);
    else {
      const literal = ch === "\\" ? (chars[++i] ?? "\\") : ch;
      segment.push(foldAscii(literal.codePointAt(0) ?? 0));
    }
  }
  segments.push(Int32Array.from(segment));
  return segments;
}

const foldAscii = (code: number): number => (code >= 65 && code <= 90 ? code + 32 : code);

/** A value's code points (a lone surrogate is one), ASCII letters folded. */
function foldedCodePoints(value: string): Int32Array {
  const codes = new Int32Array(value.length);
  let count = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.codePointAt(i) as number;
    if (code > 0xffff) i++;
    codes[count++] = foldAscii(code);
  }
  return codes.subarray(0, count);
}

/**
 * True when `value` matches the canonical `pattern`. The first segment must match at the start and
 * the last at the end; the ones between are placed, left to right, at their leftmost place after
 * the previous one (find-like-segment.ts), so time is linear in value + pattern for a pattern of
 * literals and `%`s, and value × ⌈segment ÷ 32⌉ word steps for a segment holding `_`.
 */
export function matchesLike(value: string, pattern: string): boolean {
  const codes = foldedCodePoints(value);
  const segments = segmentsOf(pattern);
  const head = segments[0] as Int32Array;
  if (segments.length === 1) return codes.length === head.length && isSegmentAt(codes, head, 0);
  const tail = segments[segments.length - 1] as Int32Array;
  const end = codes.length - tail.length;
  if (end < head.length || !isSegmentAt(codes, head, 0) || !isSegmentAt(codes, tail, end)) return false;
  let from = head.length;
  for (let s = 1; s < segments.length - 1; s++) {
    const segment = segments[s] as Int32Array;
    const at = findLikeSegment(codes, segment, from, end);
    if (at < 0) return false;
    from = at + segment.length;
  }
  return true;
}
