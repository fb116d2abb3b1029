/**
 * LIKE patterns. A written pattern is canonicalised once (by the checker) so
 * every back end reads the same thing: `%` any run of characters, `_` exactly
 * one character (a Unicode code point), `\` escaping only `%`, `_` and `\`.
 * Matching folds ASCII letters only (A-Z = a-z), exactly as SQLite's built-in
 * LIKE does; other characters must match exactly.
 */

type PatternPart = { kind: "any" } | { kind: "one" } | { kind: "char"; code: number };

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

function partsOf(canonical: string): PatternPart[] {
  const parts: PatternPart[] = [];
  const chars = [...canonical];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    if (ch === "%") parts.push({ kind: "any" });
    else if (ch === "_") parts.push({ kind: "one" });
    else {
      const literal = ch === "\\" ? (chars[++i] ?? "\\") : ch;
      parts.push({ kind: "char", code: literal.codePointAt(0) ?? 0 });
    }
  }
  return parts;
}

const foldAscii = (code: number): number => (code >= 65 && code <= 90 ? code + 32 : code);

function matchesAt(part: PatternPart | undefined, code: number): boolean {
  return (
    part !== undefined && (part.kind === "one" || (part.kind === "char" && foldAscii(part.code) === code))
  );
}

/**
 * True when `value` matches the canonical `pattern`. Linear backtracking to
 * the last `%` only, so time is O(value × pattern) whatever the pattern.
 */
export function matchesLike(value: string, pattern: string): boolean {
  const parts = partsOf(pattern);
  const codes = Array.from(value, (ch) => foldAscii(ch.codePointAt(0) ?? 0));
  let v = 0;
  let p = 0;
  let starPart = -1;
  let starValue = 0;
  while (v < codes.length) {
    if (matchesAt(parts[p], codes[v] as number)) {
      v++;
      p++;
    } else if (parts[p]?.kind === "any") {
      starPart = p++;
      starValue = v;
    } else if (starPart >= 0) {
      p = starPart + 1;
      v = ++starValue;
    } else return false;
  }
  while (parts[p]?.kind === "any") p++;
  return p === parts.length;
}
