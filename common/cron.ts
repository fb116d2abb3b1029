/**
 * A scheduled webhook's cron expression (SPEC.md §11) → its fields checked, or
 * every problem with its position. Five fields in UTC (minute, hour, day of
 * month, month, day of week), so the smallest interval is one minute; with
 * `allowSeconds` (SCHEDULED_WEBHOOKS_ALLOW_SECONDS, tests only) a sixth,
 * leading seconds field is accepted too. The accepted syntax is the common
 * subset every cron reader agrees on: `*`, numbers, ranges `a-b`, steps `/n`,
 * lists `,`; BullMQ's job scheduler evaluates the expression (with cron-parser),
 * so what it refuses, or finds no tick for, is refused here too: a value listed
 * twice in a field (0 and 7 both Sunday), and days of the month that occur in
 * none of the months listed while the day of week is `*`. An expression this
 * accepts can be scheduled (test/webhooks/cron.test.ts holds it to BullMQ's own
 * arithmetic). Pure.
 */

/** One field's name and allowed range. */
interface CronField {
  name: string;
  min: number;
  max: number;
}

const SECONDS: CronField = { name: "second", min: 0, max: 59 };
const FIVE_FIELDS: readonly CronField[] = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  // 0 and 7 are both Sunday, as in every cron.
  { name: "day of week", min: 0, max: 7 },
];

/** Days in each month, February's in a leap year: a day that occurs in some year occurs. */
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const MONTH_NAMES = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

/** A problem of a cron expression: what, and where (0-based character offset in the text). */
export interface CronProblem {
  position: number;
  message: string;
}

/** A cron expression found valid: its text normalised (single spaces) and how many fields it has. */
export interface CheckedCron {
  expression: string;
  fieldCount: 5 | 6;
}

/** The expression's fields with their offsets in the text. */
function split(text: string): { value: string; position: number }[] {
  return [...text.matchAll(/\S+/g)].map((m) => ({ value: m[0], position: m.index }));
}

/** Problems of one number within `field`, at `position`. */
function numberProblems(text: string, field: CronField, position: number): CronProblem[] {
  if (!/^\d{1,2}$/.test(text))
    return [
      { position, message: `${field.name}: '${text}' is not a number from ${field.min} to ${field.max}` },
    ];
  const value = Number(text);
  if (value < field.min || value > field.max)
    return [{ position, message: `${field.name}: ${value} is out of range ${field.min}-${field.max}` }];
  return [];
}

/** Problems of one list item (`*`, `n`, `a-b`, each optionally `/step`) of `field`, starting at `position`. */
function itemProblems(item: string, field: CronField, position: number): CronProblem[] {
  const [range = "", step, ...extra] = item.split("/");
  if (extra.length > 0) return [{ position, message: `${field.name}: '${item}' has more than one '/'` }];
  const problems: CronProblem[] = [];
  if (range === "*") {
    // every value
  } else if (range.includes("-")) {
    const [from = "", to = "", ...more] = range.split("-");
    if (more.length > 0) return [{ position, message: `${field.name}: '${range}' is not a range a-b` }];
    problems.push(...numberProblems(from, field, position));
    problems.push(...numberProblems(to, field, position + from.length + 1));
    if (problems.length === 0 && Number(from) > Number(to))
      problems.push({ position, message: `${field.name}: range ${range} goes backwards` });
  } else problems.push(...numberProblems(range, field, position));
  if (step !== undefined) {
    const at = position + range.length + 1;
    if (!/^\d{1,2}$/.test(step) || Number(step) < 1 || Number(step) > field.max)
      problems.push({
        position: at,
        message: `${field.name}: step '${step}' is not a number from 1 to ${field.max}`,
      });
  }
  return problems;
}

/** The values a well-formed list item of `field` stands for (`n/s` runs from n to the field's end). */
function itemValues(item: string, field: CronField): number[] {
  const [range = "", step] = item.split("/");
  const [from, to] =
    range === "*"
      ? [field.min, field.max]
      : range.includes("-")
        ? range.split("-").map(Number)
        : [Number(range), step === undefined ? Number(range) : field.max];
  const values: number[] = [];
  for (let value = from ?? 0; value <= (to ?? 0); value += Number(step ?? 1)) values.push(value);
  return values;
}

/** Values as text, runs of consecutive ones as ranges: `1-3, 7`. */
function describeValues(values: readonly number[]): string {
  const runs: string[] = [];
  const sorted = [...values].sort((a, b) => a - b);
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === (sorted[j] as number) + 1) j++;
    runs.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return runs.join(", ");
}

/** A field's well-formed text, its offset and the values of each of its list items. */
interface FieldValues {
  field: CronField;
  text: string;
  position: number;
  items: { position: number; values: number[] }[];
}

/**
 * The values listed more than once in a field, told at the first item repeating one. cron-parser
 * refuses them, and counts 7 as 0 (both Sunday) except within one range (`0-7`, `5-7`). Days of
 * the month are held to it whatever the month, though cron-parser drops the days a single month
 * lacks before it looks (`*,30,30 2 *` passes there): a value listed twice is a mistake anyway.
 */
function duplicateProblems({ field, items }: FieldValues): CronProblem[] {
  const isDayOfWeek = field.max === 7;
  const seen = new Set<number>();
  const repeated = new Set<number>();
  let position: number | null = null;
  for (const item of items) {
    const values = new Set(item.values.map((value) => (isDayOfWeek ? value % 7 : value)));
    for (const value of values) {
      if (!seen.has(value)) continue;
      repeated.add(value);
      position ??= item.position;
    }
    for (const value of values) seen.add(value);
  }
  if (position === null) return [];
  const sunday = isDayOfWeek && repeated.has(0) ? " (0 and 7 are both Sunday)" : "";
  return [
    { position, message: `${field.name}: ${describeValues([...repeated])} listed more than once${sunday}` },
  ];
}

/**
 * Days of the month that occur in none of the months listed, when the day of week is `*` (else a
 * day matches by its weekday, every month has each): cron-parser refuses some (a single month) and
 * finds no next tick for the rest, so the scheduler would never tick.
 */
function dayOfMonthProblems(dayOfMonth: FieldValues, month: FieldValues, dayOfWeek: FieldValues) {
  if (dayOfMonth.text === "*" || dayOfWeek.text !== "*") return [];
  const days = dayOfMonth.items.flatMap((item) => item.values);
  const months = [...new Set(month.items.flatMap((item) => item.values))].sort((a, b) => a - b);
  if (months.some((m) => days.some((day) => day <= (DAYS_IN_MONTH[m - 1] as number)))) return [];
  const unique = [...new Set(days)];
  const names = months.map((m) => MONTH_NAMES[m - 1]);
  const monthList = names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names.at(-1)}` : names[0];
  const what =
    unique.length > 1 ? `days ${describeValues(unique)} never occur` : `day ${unique[0]} never occurs`;
  return [{ position: dayOfMonth.position, message: `day of month: ${what} in ${monthList}` }];
}

/**
 * Checks a cron expression. `allowSeconds` accepts a leading seconds field (6 fields).
 * @returns the checked expression, or every problem found (never both).
 */
export function checkCron(
  text: string,
  { allowSeconds = false }: { allowSeconds?: boolean } = {},
): { cron: CheckedCron; problems: [] } | { cron: null; problems: CronProblem[] } {
  const parts = split(text);
  const counts = allowSeconds
    ? "5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first)"
    : "5 fields (minute hour day-of-month month day-of-week)";
  if (parts.length !== 5 && !(allowSeconds && parts.length === 6)) {
    // At the first field too many, or at the end when too few.
    const position = parts[allowSeconds ? 6 : 5]?.position ?? text.length;
    return { cron: null, problems: [{ position, message: `expected ${counts}, found ${parts.length}` }] };
  }
  const fields = parts.length === 6 ? [SECONDS, ...FIVE_FIELDS] : FIVE_FIELDS;
  const problems: CronProblem[] = [];
  const checked: (FieldValues | undefined)[] = [];
  parts.forEach(({ value, position }, index) => {
    const field = fields[index] as CronField;
    const items: FieldValues["items"] = [];
    let offset = position;
    const found = value.split(",").flatMap((item) => {
      const at = offset;
      offset += item.length + 1;
      const itemFound =
        item === ""
          ? [{ position: at, message: `${field.name}: empty list item` }]
          : itemProblems(item, field, at);
      if (itemFound.length === 0) items.push({ position: at, values: itemValues(item, field) });
      return itemFound;
    });
    problems.push(...found);
    // The values' rules only for a field whose every item is well-formed.
    if (found.length === 0) {
      const values = { field, text: value, position, items };
      checked[index] = values;
      problems.push(...duplicateProblems(values));
    }
  });
  const [dayOfMonth, month, dayOfWeek] = [-3, -2, -1].map((i) => checked[fields.length + i]);
  if (dayOfMonth && month && dayOfWeek) problems.push(...dayOfMonthProblems(dayOfMonth, month, dayOfWeek));
  if (problems.length > 0) return { cron: null, problems };
  return {
    cron: { expression: parts.map((p) => p.value).join(" "), fieldCount: parts.length as 5 | 6 },
    problems: [],
  };
}
