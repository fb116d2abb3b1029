/**
 * Where the change-feed readers have got to, as retention and copying a
 * store judge it: the readers' saved positions in, the stream position every
 * one of them has passed out (and the outbox documents wholly behind it).
 * Pure: change-log-session.ts reads the saved cursors and deletes or copies.
 *
 * A reader at a stream position has passed everything up to it; a reader in
 * an outbox scan has passed what came before the scan's origin, no more (what
 * the scan hands is placed by the scan, not by commit time). A reader saved
 * at the log's start, or in a scan from it, has passed nothing.
 */
import type { Document } from "mongodb";
import { compareTimes, type FeedPosition, type StreamPosition } from "./feed-position.ts";
import { toTimestamp } from "./outbox-document.ts";

/** The stream position a reader at `position` has passed (null: nothing). */
export function passedPosition(position: FeedPosition | null): StreamPosition | null {
  if (position === null) return null;
  return position.kind === "stream" ? position : position.origin;
}

/** Negative when `a` is earlier: by commit time, then part-way through a document before past all of it, then entry. */
function compareStream(a: StreamPosition, b: StreamPosition): number {
  const byTime = compareTimes(a.ts, b.ts);
  if (byTime !== 0) return byTime;
  if (a.last !== b.last) return a.last ? 1 : -1;
  return a.k - b.k;
}

/**
 * The position every reader of `saved` has passed: the earliest reader's. Null when no reader is
 * saved, or one has passed nothing (the log's start).
 */
export function passedByAll(saved: readonly (FeedPosition | null)[]): StreamPosition | null {
  if (saved.length === 0) return null;
  let low: StreamPosition | null = null;
  for (const position of saved) {
    const passed = passedPosition(position);
    if (passed === null) return null;
    if (low === null || compareStream(passed, low) < 0) low = passed;
  }
  return low;
}

/**
 * The outbox documents wholly passed at `low`: stamped before its commit time, or at it when the
 * reader went past the document's last entry (one it stopped part-way through is kept whole).
 */
export function passedDocuments(low: StreamPosition): Document {
  const ts = toTimestamp(low.ts);
  return { ct: { ...(low.last ? { $lte: ts } : { $lt: ts }), $ne: null } };
}
