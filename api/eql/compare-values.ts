/**
 * Value comparison exactly as SQLite does it for the stored representations:
 * numbers (decimal strings converted to doubles) numerically, text by Unicode
 * code point (BINARY collation on UTF-8), booleans by equality.
 */
import type { ScalarValue, ValueClass } from "./checked-filter.ts";

/** A stored value prepared for comparison in `valueClass`; null for an absent value. */
export function comparable(value: unknown, valueClass: ValueClass): ScalarValue | null {
  if (value === null || value === undefined) return null;
  if (valueClass === "number") return Number(value);
  return value as ScalarValue;
}

/** Maps a UTF-16 unit so that unit order equals code point order (surrogates sort above U+FFFF's neighbours). */
function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}

/** Negative, zero or positive as `a` sorts before, with or after `b` by code point. */
function compareText(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Negative, zero or positive; both values non-null and of the same class. */
export function compareValues(a: ScalarValue, b: ScalarValue): number {
  if (typeof a === "string" && typeof b === "string") return compareText(a, b);
  if (typeof a === "number" && typeof b === "number") return a < b ? -1 : a > b ? 1 : 0;
  return a === b ? 0 : a ? 1 : -1;
}
