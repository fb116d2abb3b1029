/** The literal, list and `NOW()` productions of the grammar (SPEC.md §4), over a `TokenStream`. */
import { MAX_DURATION_MINUTES } from "../model/field-values.ts";
import type { DurationLiteral, Literal, NowNode, NumberLiteral } from "./ast.ts";
import type { Token } from "./lexer.ts";
import { filterError, quote } from "./source-text.ts";
import type { TokenStream } from "./token-stream.ts";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Unit words of durations and `NOW()` offsets (case-insensitive), in ms. `m` is minutes. */
const UNITS: Record<string, number> = {
  ms: 1,
  millisecond: 1,
  milliseconds: 1,
  s: SECOND,
  second: SECOND,
  seconds: SECOND,
  m: MINUTE,
  minute: MINUTE,
  minutes: MINUTE,
  h: HOUR,
  hour: HOUR,
  hours: HOUR,
  d: DAY,
  day: DAY,
  days: DAY,
};
const UNIT_LIST = "a unit (ms, s, m, h, d, seconds, minutes, hours, days)";
/**
 * The longest duration or `NOW()` offset, in ms: as long as the longest Duration value (about
 * 4,083 years). Every amount up to it is kept exactly (far below 2^53), and `NOW()` moved by it
 * is still an instant a date can hold.
 */
const MAX_DURATION_MS = MAX_DURATION_MINUTES * MINUTE;

function unitOf(token: Token): number | null {
  return token.kind === "ident" ? (UNITS[token.source.toLowerCase()] ?? null) : null;
}

/** The whole number token next (for durations and offsets), or an error. */
function expectWholeNumber(stream: TokenStream, after: string): Token {
  const token = stream.peek();
  if (token.kind !== "number" || !/^\d+$/.test(token.source)) stream.fail("a whole number", after);
  return stream.next();
}

/** `<int> <unit>` → ms; the number has been checked to be whole. */
function expectUnit(stream: TokenStream, amount: Token): number {
  const unit = unitOf(stream.peek());
  if (unit === null) stream.fail(UNIT_LIST, quote(amount.source));
  stream.next();
  return boundedMs(stream, amount, (amount.value as number) * unit);
}

/**
 * `ms`, the duration written from `amount` to the current token, when it is at most `MAX_DURATION_MS`.
 * @throws FilterParseError at `amount` for a longer one, which could not be kept exactly.
 */
function boundedMs(stream: TokenStream, amount: Token, ms: number): number {
  if (ms <= MAX_DURATION_MS) return ms;
  const longest = `${MAX_DURATION_MINUTES} minutes`;
  throw filterError(
    `the duration ${quote(stream.sourceFrom(amount.position))} is longer than the longest allowed, ${longest}`,
    amount.position,
    `a duration of at most ${longest}`,
    quote(stream.sourceFrom(amount.position)),
  );
}

/** `90 minutes` (the number already consumed) or a plain number. */
function numberOrDuration(
  stream: TokenStream,
  start: Token,
  number: Token,
  sign: 1 | -1,
): NumberLiteral | DurationLiteral {
  const unit = unitOf(stream.peek());
  if (unit !== null && /^\d+$/.test(number.source)) {
    stream.next();
    const value = sign * boundedMs(stream, number, (number.value as number) * unit);
    return { kind: "duration", value, source: stream.sourceFrom(start.position), position: start.position };
  }
  const text = sign < 0 ? `-${number.source}` : number.source;
  const value = sign * (number.value as number);
  return { kind: "number", value, text, source: stream.sourceFrom(start.position), position: start.position };
}

/** `duration(1 day)`, at the `duration` identifier. */
function durationCall(stream: TokenStream): DurationLiteral {
  const start = stream.next();
  stream.expectPunct("(", quote(start.source));
  const amount = expectWholeNumber(stream, "'duration('");
  const value = expectUnit(stream, amount);
  stream.expectPunct(")", quote(stream.previous().source));
  return { kind: "duration", value, source: stream.sourceFrom(start.position), position: start.position };
}

/** The literal starting at the next token, or null when that token starts none (nothing is consumed then). */
export function parseLiteral(stream: TokenStream): Literal | null {
  const token = stream.peek();
  const base = { source: token.source, position: token.position };
  switch (token.kind) {
    case "string":
      stream.next();
      return { kind: "string", value: token.value as string, ...base };
    case "instant":
      stream.next();
      return { kind: "instant", value: token.value as number, ...base };
    case "date":
    case "time":
      stream.next();
      return { kind: token.kind, value: token.value as string, ...base };
    case "number":
      stream.next();
      return numberOrDuration(stream, token, token, 1);
    case "punct":
      if (token.source !== "-" || stream.peek(1).kind !== "number") return null;
      stream.next();
      return numberOrDuration(stream, token, stream.next(), -1);
    case "ident":
      return parseWordLiteral(stream, token);
    default:
      return null;
  }
}

function parseWordLiteral(stream: TokenStream, token: Token): Literal | null {
  const base = { source: token.source, position: token.position };
  const word = token.source.toUpperCase();
  if (word === "TRUE" || word === "FALSE") {
    stream.next();
    return { kind: "boolean", value: word === "TRUE", ...base };
  }
  if (word === "NULL") {
    stream.next();
    return { kind: "null", ...base };
  }
  if (word === "DURATION" && stream.isPunct("(", 1)) return durationCall(stream);
  return null;
}

/** True when the next tokens are `NOW(` (upper case only: `NOW()` is the one case-sensitive keyword). */
export function isNowNext(stream: TokenStream): boolean {
  const token = stream.peek();
  return token.kind === "ident" && token.source === "NOW" && stream.isPunct("(", 1);
}

/** `NOW()` with an optional `+`/`-` `<int><unit>` offset, at `NOW`. */
export function parseNow(stream: TokenStream): NowNode {
  const start = stream.next();
  stream.next();
  stream.expectPunct(")", "'NOW('");
  const sign = stream.acceptPunct("+") ?? stream.acceptPunct("-");
  if (!sign) return { kind: "now", offsetMs: 0, position: start.position };
  const amount = expectWholeNumber(stream, quote(`NOW() ${sign.source}`));
  const offsetMs = (sign.source === "-" ? -1 : 1) * expectUnit(stream, amount);
  return { kind: "now", offsetMs, position: start.position };
}

function expectLiteral(stream: TokenStream, after: string): Literal {
  return parseLiteral(stream) ?? stream.fail("a value", after);
}

/** `[a, b]` or `(a, b)` after the operator `word`; `expected` says what must come when no list does. */
export function parseList(stream: TokenStream, word: string, expected: string): Literal[] {
  const open = stream.acceptPunct("[") ?? stream.acceptPunct("(") ?? stream.fail(expected, quote(word));
  const close = open.source === "[" ? "]" : ")";
  const values = [expectLiteral(stream, quote(open.source))];
  while (stream.acceptPunct(",")) values.push(expectLiteral(stream, "','"));
  if (!stream.acceptPunct(close)) stream.fail(`',' or '${close}'`, quote(stream.previous().source));
  return values;
}

/** The operand of INCLUDES/EXCLUDES (`word`): one literal or a list. */
export function parseValues(stream: TokenStream, word: string): Literal[] {
  if (stream.isPunct("[") || stream.isPunct("(")) return parseList(stream, word, "a value or a list");
  return [expectLiteral(stream, quote(word))];
}
