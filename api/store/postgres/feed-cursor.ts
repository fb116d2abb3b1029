/**
 * The PostgreSQL engine's change-log cursors. The log is kept in commit order
 * per partition (a tenant's partition: `partitionOf`): a unit of work takes
 * one ticket from a sequence while it holds its partition's lock, so within a
 * partition tickets grow in commit order, and its entries are `(ticket, 0)`,
 * `(ticket, 1)`, …. Across partitions no order holds, so a cursor keeps, for
 * each partition, the last `(ticket, index)` read there: a reader going on
 * from it reads what every partition committed since, and never skips an entry
 * that commits late in one partition because another went ahead. Written as
 * `pg:<ticket>.<index>,…` (one pair per partition); only this folder reads it.
 */

import { FEED_PARTITIONS } from "../../../common/store/postgres/migrations.ts";
import type { FeedCursor } from "../../model/record-values.ts";

/** Where an entry stands within its partition. */
export interface LogPosition {
  ticket: number;
  index: number;
}

/** One position per partition: the last entry read there ({0, 0} before the first). */
export type CursorPositions = readonly LogPosition[];

const PREFIX = "pg:";
const PAIR = /^(0|[1-9][0-9]{0,15})\.(0|[1-9][0-9]{0,8})$/;
const START: CursorPositions = Array.from({ length: FEED_PARTITIONS }, () => ({ ticket: 0, index: 0 }));

/** The partition of a tenant's entries: FNV-1a of its id, so every process agrees without a table. */
export function partitionOf(tenantId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < tenantId.length; i++) {
    hash ^= tenantId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % FEED_PARTITIONS;
}

export function encodeCursor(positions: CursorPositions): FeedCursor {
  return `${PREFIX}${positions.map((p) => `${p.ticket}.${p.index}`).join(",")}` as FeedCursor;
}

/** The positions a cursor stands for; the log's start for null. Throws for text that is not one of ours. */
export function decodeCursor(cursor: FeedCursor | null): CursorPositions {
  if (cursor === null) return START;
  const pairs = cursor.startsWith(PREFIX) ? cursor.slice(PREFIX.length).split(",") : [];
  const positions = pairs.map((pair) => PAIR.exec(pair));
  if (positions.length !== FEED_PARTITIONS || positions.some((match) => match === null))
    throw new Error(`not a change-log cursor of the PostgreSQL store: ${JSON.stringify(cursor)}`);
  return positions.map((match) => ({ ticket: Number(match?.[1]), index: Number(match?.[2]) }));
}

/** The port's form of a saved cursor: null for the log's start. */
export const savedCursor = (positions: CursorPositions): FeedCursor | null =>
  positions.every((p) => p.ticket === 0) ? null : encodeCursor(positions);

/** Compares two positions of one partition: negative when `a` comes first. */
const comparePositions = (a: LogPosition, b: LogPosition) => a.ticket - b.ticket || a.index - b.index;

/** Each partition's position every one of `cursors` has reached (the log's start for none). */
export function passedByAll(cursors: readonly CursorPositions[]): CursorPositions {
  if (cursors.length === 0) return START;
  return START.map((_, p) =>
    cursors
      .map((positions) => positions[p] as LogPosition)
      .reduce((low, next) => (comparePositions(next, low) < 0 ? next : low)),
  );
}
