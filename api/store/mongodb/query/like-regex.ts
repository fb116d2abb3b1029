/**
 * A canonical LIKE pattern (api/eql/like-pattern.ts) → the source of a regular expression that
 * matches exactly what `matchesLike` matches, read the same by the server's PCRE2 (UTF mode, which
 * the `u` option names) and by JavaScript's `RegExp` with the `u` flag:
 *
 * - ASCII letters as `[aA]` classes, never the `i` option: PCRE2 and JavaScript fold case across
 *   Unicode (`É` = `é`, `K` = U+212A KELVIN SIGN), EQL folds ASCII only;
 * - `_` as `[\s\S]`, one code point whatever the `s` option; `%` as a run of them;
 * - the end anchored by `(?![\s\S])`, not `$`: PCRE's `$` also matches before a final newline;
 * - U+0000 as `\x00` (the server refuses a pattern holding a NUL byte), the regex syntax characters
 *   escaped with `\`, every other character as itself (no `\u{…}`/`\x{…}`: the two dialects differ);
 * - each `%…%` segment in the middle placed at its first occurrence through `(?=(?<sN>[\s\S]*?seg))\k<sN>`
 *   (a lookahead is atomic in both dialects): matching then never backtracks into an earlier
 *   segment, so time is O(value × pattern) as in the in-memory matcher, where `%a%a%a%b` would
 *   otherwise backtrack polynomially deep. Leftmost placement is exact for LIKE: a segment has a
 *   fixed length, so a match placed later never leaves more room than the first one.
 */
import { LimitExceededError } from "../../../../common/errors.ts";

/** The server refuses a regular expression longer than this many bytes (RegexMatchExpression::kMaxPatternSize). */
export const MAX_REGEX_BYTES = 32_764;

/** The `$options` every LIKE regex is sent with. */
export const LIKE_REGEX_OPTIONS = "u";

const SYNTAX = new Set("^$\\.*+?()[]{}|/");
const ANY_CHAR = "[\\s\\S]";
const END = "(?![\\s\\S])";

type Part = { kind: "any" } | { kind: "one" } | { kind: "char"; char: string };

function partsOf(canonical: string): Part[] {
  const parts: Part[] = [];
  const chars = [...canonical];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    if (ch === "%") {
      if (parts[parts.length - 1]?.kind !== "any") parts.push({ kind: "any" });
    } else if (ch === "_") parts.push({ kind: "one" });
    else parts.push({ kind: "char", char: ch === "\\" ? (chars[++i] ?? "\\") : ch });
  }
  return parts;
}

function charSource(char: string): string {
  if (/^[A-Za-z]$/.test(char)) return `[${char.toLowerCase()}${char.toUpperCase()}]`;
  if (char === "\0") return "\\x00";
  return SYNTAX.has(char) ? `\\${char}` : char;
}

const segmentSource = (segment: Part[]) =>
  segment
    .map((part) => (part.kind === "one" ? ANY_CHAR : charSource((part as { char: string }).char)))
    .join("");

/** The segments between `%`s: `a%b_c%d` → [[a], [b, _, c], [d]]; a leading or trailing `%` gives an empty one. */
function segmentsOf(parts: Part[]): Part[][] {
  const segments: Part[][] = [[]];
  for (const part of parts) {
    if (part.kind === "any") segments.push([]);
    else (segments[segments.length - 1] as Part[]).push(part);
  }
  return segments;
}

/**
 * The regex source of a canonical LIKE pattern, for `{$regex: source, $options: LIKE_REGEX_OPTIONS}`.
 * @throws LimitExceededError when the source is longer than the server takes (`MAX_REGEX_BYTES`).
 */
export function likeRegex(canonical: string): string {
  const segments = segmentsOf(partsOf(canonical));
  const first = segmentSource(segments[0] as Part[]);
  let source: string;
  if (segments.length === 1) source = `^${first}${END}`;
  else {
    const middle = segments
      .slice(1, -1)
      .map((segment, i) => `(?=(?<s${i}>${ANY_CHAR}*?${segmentSource(segment)}))\\k<s${i}>`)
      .join("");
    const last = segments[segments.length - 1] as Part[];
    source = `^${first}${middle}${last.length > 0 ? `${ANY_CHAR}*${segmentSource(last)}${END}` : ""}`;
  }
  const bytes = Buffer.byteLength(source, "utf8");
  if (bytes > MAX_REGEX_BYTES) {
    throw new LimitExceededError(
      `a LIKE pattern this long cannot be run on MongoDB: it becomes a ${bytes}-byte regular expression, and the server takes at most ${MAX_REGEX_BYTES} (each ASCII letter takes 4 bytes, for ASCII-only case folding)`,
    );
  }
  return source;
}
