/**
 * The SQLite engine's change-log cursors. One writer commits one unit of work
 * at a time, so the log's AUTOINCREMENT position follows commit order and a
 * cursor is the position of the last entry read (0: the log's start). It is
 * written as `sqlite:<position>` so that a cursor of another engine (or of
 * nothing) is refused rather than misread; only this folder knows what is in it.
 */
import type { FeedCursor } from "../../model/record-values.ts";

/** The SQLite log's partitions: one (one machine, one writer at a time). */
export const SQLITE_FEED_PARTITIONS = 1;

const PREFIX = "sqlite:";
const FORM = /^sqlite:(0|[1-9][0-9]{0,15})$/;

/** The cursor just past the entry at `position` (0 for the log's start, which the port writes as null). */
export function encodeCursor(position: number): FeedCursor {
  return `${PREFIX}${position}` as FeedCursor;
}

/** The position a cursor stands for; 0 for null (the log's start). Throws for text that is not one of ours. */
export function decodeCursor(cursor: FeedCursor | null): number {
  if (cursor === null) return 0;
  const match = FORM.exec(cursor);
  if (!match) throw new Error(`not a change-log cursor of the SQLite store: ${JSON.stringify(cursor)}`);
  return Number(match[1]);
}

/** The port's form of a saved position: null for the log's start. */
export const savedCursor = (position: number): FeedCursor | null =>
  position === 0 ? null : encodeCursor(position);
