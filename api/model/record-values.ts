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
  /**
   * The id of the request whose write made the change (common/request-context.ts), for log lines
   * downstream; absent (or null, as written) when no request made it (the admin tool) or it was logged before
   * ids were kept. Read back only when there is one.
   */
  requestId?: string | null;
}

declare const feedCursorBrand: unique symbol;

/**
 * A place in the change log, made by the store engine that keeps the log: opaque text that a
 * change-feed reader saves and hands back as it is. What it holds (a number, a resume token, a
 * position per partition) is the engine's business: outside the engine a cursor is never parsed,
 * compared or computed with, only stored and passed back (see the store's change-log port).
 */
export type FeedCursor = string & { readonly [feedCursorBrand]: true };

/** A change-log entry as read back, with the cursor just past it (reading after it goes on with the next). */
export interface LoggedChange extends ChangeEntry {
  cursor: FeedCursor;
}
