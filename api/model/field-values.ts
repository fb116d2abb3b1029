/**
 * Parsing of field values from client input into their stored representation
 * (record-codec.ts): instants → ms, dates/times → canonical text, decimals →
 * canonical strings. Pure; throws `FieldValueError` with a message for humans.
 */

export class FieldValueError extends Error {}

const fail = (message: string): never => {
  throw new FieldValueError(message);
};

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** An ISO 8601 instant with any offset → ms since the epoch. */
export function parseInstant(value: unknown): number {
  if (typeof value !== "string" || !INSTANT.test(value)) {
    return fail(
      `expected an ISO 8601 date-time with an offset, e.g. 2024-05-01T10:00:00.000Z; got ${JSON.stringify(value)}`,
    );
  }
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? fail(`${JSON.stringify(value)} is not a real date-time`) : ms;
}

/** `2024-05-01` (a real calendar date) → itself. */
export function parseLocalDate(value: unknown): string {
  if (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    return fail(`expected a date like 2024-05-01; got ${JSON.stringify(value)}`);
  }
  const date = new Date(`${value}T00:00:00Z`);
  return Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value
    ? fail(`${JSON.stringify(value)} is not a real date`)
    : value;
}

/** `10:30`, `10:30:15` or `10:30:15.250` → `HH:MM:SS.sss`. */
export function parseLocalTime(value: unknown): string {
  const match =
    typeof value === "string" ? /^([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(\.\d{1,3})?)?$/.exec(value) : null;
  if (!match) return fail(`expected a time like 10:30 or 10:30:00; got ${JSON.stringify(value)}`);
  return `${match[1]}:${match[2]}:${match[3] ?? "00"}${match[4] ? match[4].padEnd(4, "0") : ".000"}`;
}

/** A decimal number (string or finite number) → canonical string: no `+`, no exponent, no superfluous zeros. */
export function parseBigDecimal(value: unknown): string {
  const text = typeof value === "number" && Number.isFinite(value) ? String(value) : value;
  const match = typeof text === "string" ? /^(-)?(\d+)(?:\.(\d+))?$/.exec(text.trim()) : null;
  if (!match) return fail(`expected a decimal number such as "12.50"; got ${JSON.stringify(value)}`);
  const integer = (match[2] ?? "0").replace(/^0+(?=\d)/, "");
  const fraction = (match[3] ?? "").replace(/0+$/, "");
  const canonical = fraction ? `${integer}.${fraction}` : integer;
  return match[1] && canonical !== "0" ? `-${canonical}` : canonical;
}

/**
 * The longest Duration, in minutes (about 4,083 years): 2^31 − 1, the largest GraphQL `Int`, the
 * type SPEC.md §3 gives Duration. In ms it is still far below 2^53, so it is exact wherever it goes.
 */
export const MAX_DURATION_MINUTES = 2 ** 31 - 1;

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** Whole, non-negative minutes, at most `MAX_DURATION_MINUTES`. */
export function parseDuration(value: unknown): number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= MAX_DURATION_MINUTES
    ? value
    : fail(
        `expected a whole number of minutes from 0 to ${MAX_DURATION_MINUTES}; got ${JSON.stringify(value)}`,
      );
}

/** A 32-bit signed integer (what a GraphQL `Int` holds, and the only ints the store renders). */
export function parseInt32(value: unknown): number {
  return typeof value === "number" && Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX
    ? value
    : fail(`expected a whole number from ${INT32_MIN} to ${INT32_MAX}; got ${JSON.stringify(value)}`);
}

/** A field's default as a record value (a multipicklist's `a;b` default becomes `["a", "b"]`). */
export function defaultRecordValue(field: {
  type: string;
  defaultValue: string | number | boolean | null;
}): string | number | boolean | string[] | null {
  if (field.defaultValue === null) return null;
  return field.type === "multipicklist" ? String(field.defaultValue).split(";") : field.defaultValue;
}
