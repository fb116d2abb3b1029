/**
 * One segment of a LIKE pattern (the part between two `%`s) against a value's folded code points:
 * at a given place, or at its leftmost place in a range. The search is linear in value + segment
 * for a segment of literal characters (Knuth–Morris–Pratt) and bit-parallel for one holding `_`
 * (Shift-And over 32-bit words: value × ⌈segment ÷ 32⌉ word steps), so no value and no pattern
 * makes it quadratic the way trying every start and comparing would.
 */

/** In a segment, `_`: any one code point. Every other entry is a code point, ASCII letters folded. */
export const ANY_ONE = -1;

/** True when `segment` matches `codes` at `at` (the caller keeps `at + segment.length` within `codes`). */
export function isSegmentAt(codes: Int32Array, segment: Int32Array, at: number): boolean {
  for (let j = 0; j < segment.length; j++) {
    const code = segment[j] as number;
    if (code !== ANY_ONE && code !== codes[at + j]) return false;
  }
  return true;
}

/**
 * The leftmost place `at` with `from ≤ at` and `at + segment.length ≤ end` where `segment` matches
 * `codes`, or -1. Leftmost is what LIKE needs: a segment has a fixed length, so a later place never
 * leaves more room for the rest of the pattern. `_`s at either end only shift the place, so the
 * search runs on the segment's core between its first and last literal character.
 */
export function findLikeSegment(codes: Int32Array, segment: Int32Array, from: number, end: number): number {
  let first = 0;
  while (first < segment.length && segment[first] === ANY_ONE) first++;
  if (first === segment.length) return from + segment.length <= end ? from : -1;
  let last = segment.length;
  while (segment[last - 1] === ANY_ONE) last--;
  const core = segment.subarray(first, last);
  const coreEnd = end - (segment.length - last);
  const at = core.includes(ANY_ONE)
    ? findWithWildcards(codes, core, from + first, coreEnd)
    : findLiteral(codes, core, from + first, coreEnd);
  return at < 0 ? -1 : at - first;
}

/** Knuth–Morris–Pratt: at most 2 × (end − from) + 2 × literal.length comparisons. */
function findLiteral(codes: Int32Array, literal: Int32Array, from: number, end: number): number {
  const border = new Int32Array(literal.length);
  for (let j = 1, k = 0; j < literal.length; j++) {
    while (k > 0 && literal[j] !== literal[k]) k = border[k - 1] as number;
    if (literal[j] === literal[k]) k++;
    border[j] = k;
  }
  for (let i = from, k = 0; i < end; i++) {
    while (k > 0 && codes[i] !== literal[k]) k = border[k - 1] as number;
    if (codes[i] === literal[k]) k++;
    if (k === literal.length) return i - k + 1;
  }
  return -1;
}

function setBit(words: Uint32Array, bit: number): void {
  const w = bit >>> 5;
  words[w] = (words[w] as number) | (1 << (bit & 31));
}

/**
 * Shift-And: bit j of the state says the core's first j + 1 entries match the value's last j + 1
 * code points. Each code point of the core has a mask of the places it (or a `_`) may take; a code
 * point the core lacks takes the `_` places only. Words above the highest live one are skipped, so
 * the ⌈core ÷ 32⌉ factor is paid only while that many places are live.
 */
function findWithWildcards(codes: Int32Array, core: Int32Array, from: number, end: number): number {
  const words = Math.ceil(core.length / 32);
  const wildcards = new Uint32Array(words);
  for (let j = 0; j < core.length; j++) if (core[j] === ANY_ONE) setBit(wildcards, j);
  const masks = new Map<number, Uint32Array>();
  for (let j = 0; j < core.length; j++) {
    const code = core[j] as number;
    if (code === ANY_ONE) continue;
    const mask = masks.get(code) ?? wildcards.slice();
    masks.set(code, mask);
    setBit(mask, j);
  }
  const state = new Uint32Array(words);
  const lastWord = words - 1;
  const lastBit = 1 << ((core.length - 1) & 31);
  let live = 0;
  for (let i = from; i < end; i++) {
    const mask = masks.get(codes[i] as number) ?? wildcards;
    const top = Math.min(live + 1, lastWord);
    let carry = 1;
    live = -1;
    for (let w = 0; w <= top; w++) {
      const bits = state[w] as number;
      const next = ((bits << 1) | carry) & (mask[w] as number);
      carry = bits >>> 31;
      state[w] = next;
      if (next !== 0) live = w;
    }
    if (((state[lastWord] as number) & lastBit) !== 0) return i - core.length + 1;
    if (live < 0) live = 0;
  }
  return -1;
}
