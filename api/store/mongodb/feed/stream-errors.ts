/**
 * What a change-stream error means for the feed, from the driver's error
 * classes, server codes and labels (never the message): an error in, one of
 * three ways on out.
 */
import { MongoError, MongoErrorLabel, MongoNetworkError, MongoServerSelectionError } from "mongodb";

/** The server codes the feed tells apart (src/mongo/base/error_codes.yml of the server). */
const STREAM_CODE = {
  /** The cursor is gone on the server (a failover, a timeout): resumable by the spec (DRIVERS-1308). */
  cursorNotFound: 43,
  /** The snapshot a scan reads at is older than the server keeps (minSnapshotHistoryWindowInSeconds). */
  snapshotTooOld: 239,
  /** The resume token is not one the server can resume from (another cluster's, a restored backup). */
  invalidResumeToken: 260,
  /** The oplog no longer holds the resume point: the events since are gone from the stream. */
  changeStreamHistoryLost: 286,
} as const;

/**
 * - `resumable`: open the stream again from the position reached (the driver has retried once
 *   already): a network error, no server selectable, a ResumableChangeStreamError, a lost cursor,
 *   a scan's snapshot too old;
 * - `historyLost`: the stream cannot go on from the position: read the outbox instead;
 * - `fatal`: anything else (the read fails; the next read starts over).
 */
export type StreamErrorKind = "resumable" | "historyLost" | "fatal";

export function classifyStreamError(error: unknown): StreamErrorKind {
  if (error instanceof MongoNetworkError || error instanceof MongoServerSelectionError) return "resumable";
  if (!(error instanceof MongoError)) return "fatal";
  if (error.code === STREAM_CODE.changeStreamHistoryLost || error.code === STREAM_CODE.invalidResumeToken)
    return "historyLost";
  if (error.hasErrorLabel(MongoErrorLabel.ResumableChangeStreamError)) return "resumable";
  if (error.code === STREAM_CODE.cursorNotFound || error.code === STREAM_CODE.snapshotTooOld)
    return "resumable";
  return "fatal";
}
