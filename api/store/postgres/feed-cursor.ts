/**
 * The PostgreSQL engine's change-log cursors. The log is kept in commit order
 * per partition (a tenant's partition: api/store/feed-partitions.ts): a unit
 * of work takes one ticket from a sequence while it holds its partition's
 * lock, so within a partition tickets grow in commit order, and its entries
 * are `(ticket, 0)`, `(ticket, 1)`, …. Across partitions no order holds, and
 * no reader needs one: each partition has a reader of its own, and a cursor
 * is the last `(ticket, index)` read in one partition, written
 * `pg:<partition>:<ticket>.<index>`; only this folder reads it.
 */

import type { FeedCursor } from "../../model/record-values.ts";

/** Where an entry stands within its partition. */
export interface LogPosition {
  ticket: number;
  index: number;
}

/** A reader's saved position in one partition (a row of `feed_positions`). */
export interface SavedPosition extends LogPosition {
  name: string;
  partition: number;
}

const FORM = /^pg:(0|[1-9][0-9]{0,4}):(0|[1-9][0-9]{0,15})\.(0|[1-9][0-9]{0,8})$/;
const START: LogPosition = { ticket: 0, index: 0 };

/** @throws RangeError unless `partition` is one of the log's `partitions`. */
export function assertPartition(partition: number, partitions: number): void {
  if (!Number.isInteger(partition) || partition < 0 || partition >= partitions)
    throw new RangeError(`the change log has partitions 0 to ${partitions - 1}; not ${partition}`);
}

export function encodeCursor(partition: number, position: LogPosition): FeedCursor {
  return `pg:${partition}:${position.ticket}.${position.index}` as FeedCursor;
}

/**
 * The position a cursor of `partition` stands for; the partition's start for null.
 * @throws Error for text that is not one of ours, or a cursor of another partition.
 */
export function decodeCursor(partition: number, cursor: FeedCursor | null): LogPosition {
  if (cursor === null) return START;
  const match = FORM.exec(cursor);
  if (!match || Number(match[1]) !== partition)
    throw new Error(
      `not a change-log cursor of partition ${partition} of the PostgreSQL store: ${JSON.stringify(cursor)}`,
    );
  return { ticket: Number(match[2]), index: Number(match[3]) };
}

/** The port's form of a saved position: null for the partition's start. */
export const savedCursor = (partition: number, position: LogPosition): FeedCursor | null =>
  position.ticket === 0 ? null : encodeCursor(partition, position);

/** Compares two positions of one partition: negative when `a` comes first. */
const comparePositions = (a: LogPosition, b: LogPosition) => a.ticket - b.ticket || a.index - b.index;

/**
 * Each of the `partitions`' position every saved reader has reached: the lowest of the readers'
 * positions there, where a reader without one in a partition (it saved in others only) stands at
 * its start. The log's start everywhere when no reader has saved.
 */
export function passedByAll(partitions: number, saved: readonly SavedPosition[]): LogPosition[] {
  const names = new Set(saved.map((row) => row.name));
  return Array.from({ length: partitions }, (_, p) => {
    const here = saved.filter((row) => row.partition === p);
    if (names.size === 0 || here.length < names.size) return START;
    return here
      .map(({ ticket, index }) => ({ ticket, index }))
      .reduce((low, next) => (comparePositions(next, low) < 0 ? next : low));
  });
}
