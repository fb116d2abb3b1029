/**
 * Filter text → tokens. Strings come out unescaped, instants as ms, dates and
 * times in their stored text form; keywords are plain identifiers (the parser
 * recognises them, case-insensitively). Throws `FilterParseError` for a
 * character that starts no token, an unterminated string, a string holding a
 * lone surrogate, or an impossible date, time or instant.
 */
import type { SourcePosition } from "../../common/errors.ts";
import { ILL_FORMED_TEXT, isWellFormedText } from "../model/well-formed-text.ts";
import { parseDateText, parseInstantText, parseTimeText } from "./literal-text.ts";
import { expectedError, filterError, positioner, quote } from "./source-text.ts";

/** Token classes; keywords are `ident`s. */
export type TokenKind =
  | "ident"
  | "string"
  | "number"
  | "instant"
  | "date"
  | "time"
  | "operator"
  | "punct"
  | "end";

/** One token with where it starts. */
export interface Token {
  kind: TokenKind;
  /** The token as written. */
  source: string;
  /** string: unescaped text; number, instant: the number (instants in ms); date, time: stored text; else `source`. */
  value: string | number;
  position: SourcePosition;
}

const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const INSTANT_SHAPE = /\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}(?::?\d{2})?)?/y;
const DATE_SHAPE = /\d{4}-\d{2}-\d{2}/y;
const TIME_SHAPE = /\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?/y;
const NUMBER = /\d+(?:\.\d+)?/y;
const OPERATORS = ["==", "!=", "<=", ">=", "<", ">"];
const PUNCTUATION = "()[],.+-";

function matchAt(pattern: RegExp, text: string, offset: number): string | null {
  pattern.lastIndex = offset;
  return pattern.exec(text)?.[0] ?? null;
}

type Scan = { kind: TokenKind; source: string; value: string | number };

/** The string literal starting at `offset` (a quote): a backslash escapes the quote and itself, and is kept before anything else. */
function scanString(text: string, offset: number, at: (offset: number) => SourcePosition): Scan {
  const quoteChar = text[offset] as string;
  let value = "";
  for (let i = offset + 1; i < text.length; i++) {
    const ch = text[i] as string;
    const next = text[i + 1];
    if (ch === quoteChar) {
      if (!isWellFormedText(value)) throw filterError(`a string: ${ILL_FORMED_TEXT}`, at(offset));
      return { kind: "string", source: text.slice(offset, i + 1), value };
    }
    if (ch === "\\" && (next === quoteChar || next === "\\")) {
      value += next;
      i++;
    } else value += ch;
  }
  throw filterError(`unterminated string (no closing ${quoteChar})`, at(offset), quoteChar, "end of filter");
}

/** A literal starting with a digit: instant, date, time or number. */
function scanDigits(text: string, offset: number, at: (offset: number) => SourcePosition): Scan {
  const invalid = (source: string, example: string) =>
    expectedError(`a real ${example}`, quote(source), at(offset));
  const instant = matchAt(INSTANT_SHAPE, text, offset);
  if (instant !== null) {
    const ms = parseInstantText(instant);
    if (ms === null) throw invalid(instant, "instant with an offset, like 2024-05-01T10:00:00.000Z");
    return { kind: "instant", source: instant, value: ms };
  }
  const date = matchAt(DATE_SHAPE, text, offset);
  if (date !== null && /[Tt]\d/.test(text.slice(offset + date.length, offset + date.length + 2))) {
    const word = /\S*/y;
    throw invalid(
      matchAt(word, text, offset) ?? date,
      "instant with an offset, like 2024-05-01T10:00:00.000Z",
    );
  }
  if (date !== null) {
    const value = parseDateText(date);
    if (value === null) throw invalid(date, "date, like 2024-05-01");
    return { kind: "date", source: date, value };
  }
  const time = matchAt(TIME_SHAPE, text, offset);
  if (time !== null) {
    const value = parseTimeText(time);
    if (value === null) throw invalid(time, "time of day, like 10:30 or 10:30:00");
    return { kind: "time", source: time, value };
  }
  const number = matchAt(NUMBER, text, offset) as string;
  return { kind: "number", source: number, value: Number(number) };
}

function scanToken(text: string, offset: number, at: (offset: number) => SourcePosition): Scan {
  const ch = text[offset] as string;
  if (ch === "'" || ch === '"') return scanString(text, offset, at);
  if (ch >= "0" && ch <= "9") return scanDigits(text, offset, at);
  const ident = matchAt(IDENT, text, offset);
  if (ident !== null) return { kind: "ident", source: ident, value: ident };
  const operator = OPERATORS.find((op) => text.startsWith(op, offset));
  if (operator) return { kind: "operator", source: operator, value: operator };
  if (PUNCTUATION.includes(ch)) return { kind: "punct", source: ch, value: ch };
  const hint = ch === "=" ? "'=='" : ch === "!" ? "'!='" : "a field, a value, an operator or a parenthesis";
  throw expectedError(hint, quote(String.fromCodePoint(text.codePointAt(offset) ?? 0)), at(offset));
}

/** All tokens of `text`, ending with one `end` token positioned just past the text. */
export function tokenize(text: string): Token[] {
  const at = positioner(text);
  const tokens: Token[] = [];
  let offset = 0;
  for (;;) {
    while (offset < text.length && /\s/.test(text[offset] as string)) offset++;
    if (offset >= text.length) break;
    const scan = scanToken(text, offset, at);
    tokens.push({ ...scan, position: at(offset) });
    offset += scan.source.length;
  }
  tokens.push({ kind: "end", source: "", value: "", position: at(text.length) });
  return tokens;
}
