/**
 * Record values in memory, keyed by field name (a reference's name holds the
 * target's UID): datetime → ms since the epoch; date → "YYYY-MM-DD"; time →
 * "HH:MM:SS.sss"; decimal → canonical decimal string; boolean → boolean;
 * int/duration → integer; multipicklist → string[]; id/reference → UID; the rest → string.
 */
export type FieldValue = string | number | boolean | string[] | null;
export type RecordValues = Record<string, FieldValue>;

/**
 * True when two field values are the same value: equal scalars, or
 * multipicklists with the same items in the same order. Used to tell which
 * fields a write changed (a mutation's change entry, a watched-field match).
 */
export function sameValue(a: FieldValue, b: FieldValue): boolean {
  return Array.isArray(a) && Array.isArray(b)
    ? a.length === b.length && a.every((v, i) => v === b[i])
    : a === b;
}

/** The kinds of change a mutation makes to a record. */
export type ChangeOperation = "INSERT" | "UPDATE" | "DELETE";

/** One changed record, as the change log keeps it (written in the mutation's transaction). */
export interface ChangeEntry {
  tenantId: string;
  objectName: string;
  operation: ChangeOperation;
  uid: string;
  /** Values before the change (null for INSERT). */
  before: RecordValues | null;
  /** Values after the change (null for DELETE). */
  after: RecordValues | null;
  mutationId: string;
  /** 0-based position of this change within its mutation. */
  sequence: number;
  /** Commit time, ms since the epoch. */
  committedAt: number;
}

/** A change-log entry as read back, with its position in commit order. */
export interface LoggedChange extends ChangeEntry {
  position: number;
}
