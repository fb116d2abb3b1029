/**
 * Positions in the MongoDB engine's change log, and their cursors (the text
 * the port hands out and takes back; only this folder reads it).
 *
 * One outbox document holds one unit of work's entries, and one transaction
 * commits at one cluster time, so the change stream's events are ordered by
 * their cluster time and an entry's place is (cluster time, index in its
 * document): comparable, so an event seen again after a resume is recognised
 * and dropped. A stream position also keeps the event's resume token, to
 * reopen the stream just after it. While the feed reads the outbox instead
 * (from the log's start, or after the stream lost its history: a scan), an
 * entry's place is its document's key in the stamp order (its stamp `ct`,
 * then `lb`, then `_id`: the order a scan hands documents in, and the
 * change_log_commit index's) and its index there: a scan position says
 * exactly which documents its reader has passed, and a scan goes on from it.
 */
import type { FeedCursor } from "../../../model/record-values.ts";

/** A cluster time: the BSON Timestamp's seconds (`t`) and increment (`i`). */
export interface ClusterTime {
  t: number;
  i: number;
}

/** Just past entry `k` of the outbox document whose insert the stream showed at `ts` (resume token `token`). */
export interface StreamPosition {
  kind: "stream";
  ts: ClusterTime;
  k: number;
  /** True when `k` is the document's last entry: the stream reopens after the event's token. */
  last: boolean;
  token: string;
}

/**
 * Just past entry `k` of outbox document `doc`, handed by a scan: the document's key in the stamp
 * order (`ct` its stamp as the scan handed it, the scan's read time for one it stamped itself;
 * `lb`; `doc` its `_id` as hex). `last` when `k` is the document's last entry.
 */
export interface ScanPosition {
  kind: "scan";
  ct: ClusterTime;
  lb: ClusterTime;
  doc: string;
  k: number;
  last: boolean;
}

export type FeedPosition = StreamPosition | ScanPosition;

/** Negative when `a` is earlier, 0 when equal, positive when later. */
export function compareTimes(a: ClusterTime, b: ClusterTime): number {
  return a.t - b.t || a.i - b.i;
}

/** Where a stream that ends at `position` is reopened: after the token when the document was finished, else at its time. */
export function resumeFrom(position: StreamPosition): ResumePoint {
  return position.last ? { startAfter: position.token } : { startAtOperationTime: position.ts };
}

/** How the stream is opened: after a resume token, or at a cluster time (inclusive). */
export type ResumePoint = { startAfter: string } | { startAtOperationTime: ClusterTime };

const PREFIX = "mdb1:";
const UINT = (value: unknown) => typeof value === "number" && Number.isInteger(value) && value >= 0;
const isTime = (value: unknown): value is ClusterTime =>
  typeof value === "object" &&
  value !== null &&
  UINT((value as ClusterTime).t) &&
  UINT((value as ClusterTime).i);
const HEX = /^[0-9a-fA-F]{1,4096}$/;

function isStream(value: unknown): value is StreamPosition {
  const p = value as StreamPosition;
  return (
    typeof p === "object" &&
    p !== null &&
    p.kind === "stream" &&
    isTime(p.ts) &&
    UINT(p.k) &&
    typeof p.last === "boolean" &&
    typeof p.token === "string" &&
    HEX.test(p.token)
  );
}

function isScan(value: unknown): value is ScanPosition {
  const p = value as ScanPosition;
  return (
    typeof p === "object" &&
    p !== null &&
    p.kind === "scan" &&
    isTime(p.ct) &&
    isTime(p.lb) &&
    typeof p.doc === "string" &&
    /^[0-9a-f]{24}$/.test(p.doc) &&
    UINT(p.k) &&
    typeof p.last === "boolean"
  );
}

const time = (ts: ClusterTime): ClusterTime => ({ t: ts.t, i: ts.i });

/** The position with its keys in one order, so equal positions encode alike. */
function canonical(position: FeedPosition): FeedPosition {
  if (position.kind === "stream") {
    const { ts, k, last, token } = position;
    return { kind: "stream", ts: time(ts), k, last, token };
  }
  const { ct, lb, doc, k, last } = position;
  return { kind: "scan", ct: time(ct), lb: time(lb), doc, k, last };
}

/** The position as a cursor. */
export function encodePosition(position: FeedPosition): FeedCursor {
  return `${PREFIX}${Buffer.from(JSON.stringify(canonical(position))).toString("base64url")}` as FeedCursor;
}

/** The position a cursor stands for; null for null (the log's start). @throws Error for text that is not one of ours. */
export function decodePosition(cursor: FeedCursor | null): FeedPosition | null {
  if (cursor === null) return null;
  let value: unknown = null;
  if (cursor.startsWith(PREFIX))
    try {
      value = JSON.parse(Buffer.from(cursor.slice(PREFIX.length), "base64url").toString("utf8"));
    } catch {
      value = null;
    }
  if (isStream(value) || isScan(value)) return value;
  throw new Error(`not a change-log cursor of the MongoDB store: ${JSON.stringify(cursor).slice(0, 200)}`);
}

/** True when both stand for the same place (null: the log's start). */
export function samePosition(a: FeedPosition | null, b: FeedPosition | null): boolean {
  if (a === null || b === null) return a === b;
  return encodePosition(a) === encodePosition(b);
}
