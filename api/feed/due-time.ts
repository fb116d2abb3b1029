/**
 * A deferred webhook's due time (SPEC.md §11): a record's values in, the
 * instant it is due at out (`field + offset`), or null when it has none (the
 * instant is empty). The offset is fixed milliseconds or read from a field of
 * the record: Int and Decimal as milliseconds, Duration (whole minutes) as its
 * length; an empty offset field takes the rule's default, or leaves the record
 * without a due time when there is none. Pure.
 */
import type { FieldValue, RecordValues } from "../model/record-values.ts";

/** The kinds of field an offset may be read from. */
export type OffsetFieldType = "int" | "decimal" | "duration";

/** When a deferred webhook's record is due, with the offset field's type resolved from the catalogue. */
export interface DueRule {
  /** The datetime (Instant) field, ms since the epoch in record values. */
  field: string;
  offset: number | { field: string; type: OffsetFieldType; default?: number };
}

const MINUTE_MS = 60_000;

/** An offset field's value in ms; null when empty or not a finite number. */
function offsetMs(value: FieldValue | undefined, type: OffsetFieldType): number | null {
  if (value === null || value === undefined) return null;
  const n = typeof value === "number" ? value : typeof value === "string" ? Number(value) : Number.NaN;
  if (!Number.isFinite(n)) return null;
  return Math.trunc(type === "duration" ? n * MINUTE_MS : n);
}

/** The record's due time in ms since the epoch, or null when it is not due at all. */
export function dueTimeOf(values: RecordValues, rule: DueRule): number | null {
  const instant = values[rule.field];
  if (typeof instant !== "number" || !Number.isFinite(instant)) return null;
  if (typeof rule.offset === "number") return instant + rule.offset;
  const offset = offsetMs(values[rule.offset.field], rule.offset.type) ?? rule.offset.default ?? null;
  return offset === null ? null : instant + offset;
}

/** How long from `now` until `dueAt`: 0 for a due time already past (it fires at once). */
export const delayUntil = (dueAt: number, now: number): number => Math.max(0, dueAt - now);
