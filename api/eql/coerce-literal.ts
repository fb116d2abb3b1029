/**
 * Literals → the stored representation of the value they are compared with
 * (record-codec.ts), or a `FilterParseError` at the literal saying what was
 * expected. Quoted strings are accepted wherever their text is a valid value
 * of the class (`'42'` for a number, `'2024-05-01'` for a date).
 */
import type { FieldType } from "../model/catalogue.ts";
import type { Literal } from "./ast.ts";
import type { ScalarValue, ValueClass } from "./checked-filter.ts";
import {
  canonicalDecimal,
  dateStartMs,
  parseDateText,
  parseInstantText,
  parseTimeText,
} from "./literal-text.ts";
import { expectedError, quote } from "./source-text.ts";

const MINUTE_MS = 60_000;

/** What a literal is compared with: its class, exact type (`operation` for `Operation`) and allowed values. */
export interface CoercionTarget {
  valueClass: ValueClass;
  type: FieldType | "operation";
  /** Allowed values (picklists, `Operation`); null for any. */
  items: readonly string[] | null;
  /** How messages name it: `Jobs.Duration (duration)`. */
  label: string;
}

/** The class each field type compares in. */
export const VALUE_CLASS: Readonly<Record<FieldType, ValueClass>> = {
  string: "text",
  textarea: "text",
  url: "text",
  picklist: "text",
  id: "text",
  reference: "text",
  int: "number",
  duration: "number",
  decimal: "number",
  boolean: "boolean",
  date: "date",
  datetime: "datetime",
  time: "time",
  multipicklist: "multipicklist",
};

const EXPECTED: Readonly<Record<ValueClass, string>> = {
  text: "a string",
  number: "a number",
  boolean: "true or false",
  datetime: "an instant like 2024-05-01T10:00:00.000Z",
  date: "a date like 2024-05-01",
  time: "a time like 10:30",
  multipicklist: "a string",
};

function numberValue(text: string, target: CoercionTarget): number | string | null {
  if (target.type === "decimal") return canonicalDecimal(text);
  const value = /^\s*-?\d+(\.\d+)?\s*$/.test(text) ? Number(text) : Number.NaN;
  return Number.isFinite(value) ? value : null;
}

function fromNumber(literal: Literal, target: CoercionTarget): ScalarValue | null {
  if (literal.kind === "number") return numberValue(literal.text, target);
  if (literal.kind === "string") return numberValue(literal.value, target);
  const whole = target.type === "int" || target.type === "duration";
  return literal.kind === "duration" && whole ? literal.value / MINUTE_MS : null;
}

function fromDatetime(literal: Literal): ScalarValue | null {
  if (literal.kind === "instant") return literal.value;
  if (literal.kind === "date") return dateStartMs(literal.value);
  if (literal.kind !== "string") return null;
  const date = parseDateText(literal.value);
  return parseInstantText(literal.value) ?? (date === null ? null : dateStartMs(date));
}

function fromText(literal: Literal, target: CoercionTarget, checkItems: boolean): ScalarValue | null {
  if (literal.kind !== "string") return null;
  if (checkItems && target.items && !target.items.includes(literal.value)) {
    const expected = `one of ${target.items.map((item) => quote(item)).join(", ")} (values of ${target.label})`;
    throw expectedError(expected, quote(literal.value), literal.position);
  }
  return literal.value;
}

function convert(literal: Literal, target: CoercionTarget, checkItems: boolean): ScalarValue | null {
  const text = literal.kind === "string" ? literal.value : null;
  switch (target.valueClass) {
    case "text":
    case "multipicklist":
      return fromText(literal, target, checkItems);
    case "number":
      return fromNumber(literal, target);
    case "boolean":
      if (literal.kind === "boolean") return literal.value;
      return text === null || !/^(true|false)$/i.test(text) ? null : text.toLowerCase() === "true";
    case "datetime":
      return fromDatetime(literal);
    case "date":
      return literal.kind === "date" ? literal.value : text === null ? null : parseDateText(text);
    case "time":
      return literal.kind === "time" ? literal.value : text === null ? null : parseTimeText(text);
  }
}

/**
 * A non-null literal as a value of `target`. Values of picklists and
 * `Operation` are checked against their items when `checkItems` (equality and
 * IN; not for ordering comparisons or patterns).
 * @throws FilterParseError at the literal when it does not fit.
 */
export function coerceLiteral(literal: Literal, target: CoercionTarget, checkItems = true): ScalarValue {
  const value = convert(literal, target, checkItems);
  if (value === null) {
    throw expectedError(
      `${EXPECTED[target.valueClass]} for ${target.label}`,
      describeLiteral(literal),
      literal.position,
    );
  }
  return value;
}

/** How messages name a literal: `string 'abc'`, `number 5`. */
export function describeLiteral(literal: Literal): string {
  return `${literal.kind} ${literal.kind === "string" ? quote(literal.value) : literal.source}`;
}
