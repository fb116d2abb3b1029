/**
 * The change feed's vocabulary: what the machine (feed-machine.ts) is told
 * (events: a read, what the stream, a stamp or a scan answered) and what it
 * asks for (actions), and the outbox documents and stream events they carry.
 */
import type { ChangeEntry } from "../../../model/record-values.ts";
import type { ClusterTime, FeedPosition, ResumePoint } from "./feed-position.ts";

/** An outbox document as the feed reads it: one unit of work's entries. */
export interface OutboxDocument {
  /** The ObjectId, as hex. */
  id: string;
  entries: readonly ChangeEntry[];
  /** A cluster time its writer had seen, below its commit (the stamp order's second key). */
  lb: ClusterTime;
  /** The unit's index of `entries[0]` (retention deletes a document's first entries once every reader passed them). */
  from: number;
  /** Its commit time once a reader stamped it (or the read time of the scan that handed it); null before. */
  ct: ClusterTime | null;
}

/** An insert into the outbox, as the change stream shows it. */
export interface StreamEvent {
  /** The resume token's `_data`. */
  token: string;
  /** The transaction's commit time. */
  ts: ClusterTime;
  doc: OutboxDocument;
}

/** Where the next page of a scan goes on from (the shell's; the machine hands it back). */
export type ScanKey = Readonly<Record<string, unknown>>;

/**
 * A scan's page to read: the entries after the reader's place `origin` (all when null: the log's
 * start), from `from`, at `readAt` (null: now).
 */
export interface ScanRequest {
  origin: FeedPosition | null;
  from: ScanKey | null;
  readAt: ClusterTime | null;
}

export interface PositionedEntry {
  entry: ChangeEntry;
  position: FeedPosition;
}

export type FeedAction =
  | { type: "open"; from: ResumePoint }
  | { type: "pull"; max: number }
  | { type: "stamp"; docs: { id: string; ct: ClusterTime }[] }
  | { type: "scan"; request: ScanRequest }
  | { type: "hand"; entries: PositionedEntry[] }
  | { type: "fail"; error: unknown }
  | { type: "close" };

export type FeedEvent =
  | { type: "read"; after: FeedPosition | null; limit: number }
  | { type: "opened" }
  | { type: "received"; events: readonly StreamEvent[] }
  | { type: "stamped" }
  | { type: "scanned"; docs: readonly OutboxDocument[]; readAt: ClusterTime; next: ScanKey | null }
  | { type: "failed"; error: unknown }
  /** No read for a while (the reader lost its lease, or stopped): keep nothing. */
  | { type: "readerGone" };
