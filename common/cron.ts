/**
 * A scheduled webhook's cron expression (SPEC.md §11) → its fields checked, or
 * every problem with its position. Five fields in UTC (minute, hour, day of
 * month, month, day of week), so the smallest interval is one minute; with
 * `allowSeconds` (SCHEDULED_WEBHOOKS_ALLOW_SECONDS, tests only) a sixth,
 * leading seconds field is accepted too. The accepted syntax is the common
 * subset every cron reader agrees on: `*`, numbers, ranges `a-b`, steps `/n`,
 * lists `,`; BullMQ's job scheduler evaluates the expression. Pure.
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
  const problems = parts.flatMap(({ value, position }, index) => {
    const field = fields[index] as CronField;
    let offset = position;
    return value.split(",").flatMap((item) => {
      const at = offset;
      offset += item.length + 1;
      return item === ""
        ? [{ position: at, message: `${field.name}: empty list item` }]
        : itemProblems(item, field, at);
    });
  });
  if (problems.length > 0) return { cron: null, problems };
  return {
    cron: { expression: parts.map((p) => p.value).join(" "), fieldCount: parts.length as 5 | 6 },
    problems: [],
  };
}
