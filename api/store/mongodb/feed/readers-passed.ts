/**
 * What a change-feed reader at a position has passed, as the feed, the lag,
 * retention and copying a store judge it: positions in; a comparison, the
 * lowest of the saved readers, and the filters over outbox documents out.
 * Pure: feed-machine.ts drops what a scan's reader has passed,
 * change-log-session.ts reads the saved cursors and counts, deletes or
 * copies.
 *
 * Every position stands for a prefix of the stamp order (documents by `ct`,
 * `lb`, `_id`; unstamped ones are never passed):
 * - a stream position at commit time `ts` has passed the documents stamped
 *   before `ts`, and those stamped at `ts` once it is past the last entry
 *   of its document (a document's stamp is at or after its commit, so a
 *   document passed this way was committed before the reader's place);
 * - a scan position has passed the documents before its document's key, and
 *   that document too once it is past its last entry (a scan hands the
 *   stamped documents in stamp order, then stamps the unstamped ones with its
 *   read time, after every stamp it read, and hands them in `lb`, `_id`
 *   order: their stamp order).
 * A reader saved at the log's start has passed nothing.
 */
import { type Document, ObjectId } from "mongodb";
import {
  type ClusterTime,
  compareTimes,
  type FeedPosition,
  type ScanPosition,
  type StreamPosition,
} from "./feed-position.ts";
import { toTimestamp } from "./outbox-document.ts";

/** An outbox document's key in the stamp order. */
export interface StampKey {
  ct: ClusterTime;
  lb: ClusterTime;
  /** The `_id`, as hex. */
  doc: string;
}

/** Negative when `a` is earlier in the stamp order (the `_id`s as hex compare as their bytes). */
function compareKeys(a: StampKey, b: StampKey): number {
  return compareTimes(a.ct, b.ct) || compareTimes(a.lb, b.lb) || (a.doc < b.doc ? -1 : a.doc > b.doc ? 1 : 0);
}

/** A stream reader at `ts` against a scan reader at a document stamped at `ct`, as `comparePlaces`. */
function streamAgainstScan(stream: StreamPosition, scan: ScanPosition): number {
  // At the same time: short of its document, the stream reader has passed only what is stamped
  // before `ts` (less than the scan reader); past it, everything stamped at `ts` (more).
  return compareTimes(stream.ts, scan.ct) || (stream.last ? 1 : -1);
}

/**
 * Negative when a reader at `a` has passed less than one at `b` (its prefix of the stamp order is
 * shorter), 0 when the same, positive when more. Part-way through a document is before past all of it.
 */
export function comparePlaces(a: FeedPosition, b: FeedPosition): number {
  if (a.kind === "scan") return b.kind === "scan" ? compareKeys(a, b) || a.k - b.k : -streamAgainstScan(b, a);
  if (b.kind === "scan") return streamAgainstScan(a, b);
  const byTime = compareTimes(a.ts, b.ts);
  if (byTime !== 0) return byTime;
  if (a.last !== b.last) return a.last ? 1 : -1;
  return a.k - b.k;
}

/**
 * The place every reader of `saved` has passed: the lowest reader's own position (a cursor the
 * feed reads on from). Null when no reader is saved, or one is at the log's start.
 */
export function passedByAll(saved: readonly (FeedPosition | null)[]): FeedPosition | null {
  if (saved.length === 0) return null;
  let low: FeedPosition | null = null;
  for (const position of saved) {
    if (position === null) return null;
    if (low === null || comparePlaces(position, low) < 0) low = position;
  }
  return low;
}

/** True when a reader at `position` has passed entry `k` of document `key` (stamped: an unstamped one never is). */
export function isEntryPassed(position: FeedPosition | null, key: StampKey, k: number): boolean {
  if (position === null) return false;
  const byPlace = position.kind === "stream" ? compareTimes(key.ct, position.ts) : compareKeys(key, position);
  return byPlace < 0 || (byPlace === 0 && k <= position.k);
}

type Comparison = "$lt" | "$lte" | "$gt" | "$gte";

/** The stamped documents before (`$lt`), at or before, after or at or after `key` in the stamp order (change_log_commit's). */
export function stampOrderFilter(key: StampKey, op: Comparison): Document {
  const ct = toTimestamp(key.ct);
  const lb = toTimestamp(key.lb);
  const strict = op === "$lte" ? "$lt" : op === "$gte" ? "$gt" : op;
  return {
    $and: [
      { ct: { $ne: null } },
      {
        $or: [
          { ct: { [strict]: ct } },
          { ct, lb: { [strict]: lb } },
          { ct, lb, _id: { [op]: new ObjectId(key.doc) } },
        ],
      },
    ],
  };
}

/** The outbox documents wholly passed at `low` (one it stopped part-way through is kept whole). */
export function passedDocuments(low: FeedPosition): Document {
  if (low.kind === "scan") return stampOrderFilter(low, low.last ? "$lte" : "$lt");
  const ts = toTimestamp(low.ts);
  return { ct: { ...(low.last ? { $lte: ts } : { $lt: ts }), $ne: null } };
}

/**
 * The lag's pipeline over the outbox: the entries a reader at `from` has not passed (those of
 * documents not stamped yet included) and the earliest commit time among them (each document's
 * first entry not passed: a document's `at` is its latest).
 */
export function lagPipeline(from: FeedPosition | null): Document[] {
  let ahead: Document = {};
  // Entries of the document the reader stopped part-way through: those after its `k` are left.
  let partly: unknown = false;
  if (from?.kind === "stream") {
    const ts = toTimestamp(from.ts);
    ahead = { $or: [{ ct: null }, { ct: { $gte: ts } }] };
    partly = { $eq: ["$ct", ts] };
  } else if (from?.kind === "scan") {
    ahead = { $or: [{ ct: null }, stampOrderFilter(from, "$gte")] };
    partly = { $eq: ["$_id", new ObjectId(from.doc)] };
  }
  // The unit's entries up to `k` are passed; `o` of them retention has deleted already.
  const skip =
    from === null
      ? 0
      : { $cond: [partly, { $max: [0, { $subtract: [from.k + 1, { $ifNull: ["$o", 0] }] }] }, 0] };
  return [
    { $match: ahead },
    { $project: { left: { $subtract: ["$n", skip] }, first: { $arrayElemAt: ["$e.committedAt", skip] } } },
    { $match: { left: { $gt: 0 } } },
    { $group: { _id: null, changes: { $sum: "$left" }, oldest: { $min: "$first" } } },
  ];
}
