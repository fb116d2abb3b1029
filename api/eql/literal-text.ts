/**
 * Texts of date/time and decimal literals → their stored representation
 * (record-codec.ts): instants → ms since the epoch, dates → `YYYY-MM-DD`,
 * times → `HH:MM:SS.sss`, decimals → canonical strings. Each returns null for
 * a malformed or impossible value (`2024-02-30`, `25:00`).
 */

const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:[Zz]|([+-])(\d{2})(?::?(\d{2}))?)$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/;
const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?$/;

/** Days in `month` (1-12) of `year`, proleptic Gregorian. */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function isRealDate(year: number, month: number, day: number): boolean {
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

function isRealTime(hour: number, minute: number, second: number): boolean {
  return hour <= 23 && minute <= 59 && second <= 59;
}

/** ms of a fraction of a second written with 1-9 digits (truncated to whole ms). */
function fractionMs(digits: string | undefined): number {
  return digits ? Number(digits.padEnd(3, "0").slice(0, 3)) : 0;
}

/** `2024-05-01T10:00:00.000Z` or any offset (`+02:00`, `+0200`, `+02`) → ms since the epoch. */
export function parseInstantText(text: string): number | null {
  const m = INSTANT.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = [1, 2, 3, 4, 5, 6, 9, 10].map(
    (group) => Number(m[group] ?? 0),
  ) as [number, number, number, number, number, number, number, number];
  const valid =
    isRealDate(year, month, day) &&
    isRealTime(hour, minute, second) &&
    offsetHours <= 23 &&
    offsetMinutes <= 59;
  if (!valid) return null;
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, keeps years 0-99 as written.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, fractionMs(m[7]));
  const offset = (m[8] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return date.getTime() - offset;
}

/** `2024-05-01` (a real calendar date) → itself. */
export function parseDateText(text: string): string | null {
  const m = DATE.exec(text);
  return m && isRealDate(Number(m[1]), Number(m[2]), Number(m[3])) ? text : null;
}

/** `9:30`, `10:30:15`, `10:30:15.25` → `HH:MM:SS.sss`. */
export function parseTimeText(text: string): string | null {
  const m = TIME.exec(text);
  if (!m || !isRealTime(Number(m[1]), Number(m[2]), Number(m[3] ?? 0))) return null;
  const ms = String(fractionMs(m[4])).padStart(3, "0");
  return `${(m[1] ?? "").padStart(2, "0")}:${m[2]}:${m[3] ?? "00"}.${ms}`;
}

/** ms since the epoch of the UTC midnight starting `date` (`YYYY-MM-DD`). */
export function dateStartMs(date: string): number {
  return parseInstantText(`${date}T00:00Z`) ?? Number.NaN;
}

/** `-012.500` → `-12.5`: no `+`, no exponent, no superfluous zeros, no negative zero. */
export function canonicalDecimal(text: string): string | null {
  const m = DECIMAL.exec(text.trim());
  if (!m) return null;
  const integer = (m[2] ?? "0").replace(/^0+(?=\d)/, "");
  const fraction = (m[3] ?? "").replace(/0+$/, "");
  const canonical = fraction ? `${integer}.${fraction}` : integer;
  return m[1] && canonical !== "0" ? `-${canonical}` : canonical;
}

/** The UTC date (`YYYY-MM-DD`) and time of day (`HH:MM:SS.sss`) of an instant. */
export function splitInstant(ms: number): { date: string; time: string } {
  const iso = new Date(ms).toISOString();
  // Years past 9999 or before 0 render with a sign and six digits; the date part ends at the "T".
  const t = iso.indexOf("T");
  return { date: iso.slice(0, t), time: iso.slice(t + 1, t + 13) };
}
