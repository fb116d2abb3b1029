/**
 * The driver-facing shell of the change feed (feed-machine.ts decides): a
 * read of the change log in, the machine stepped, its actions carried out on
 * the driver (a change stream on the outbox, the stamp writes, the outbox
 * scan at one snapshot), the entries handed out. One read at a time; a
 * stream left unread for `idleCloseMs` is closed (its reader has lost the
 * lease or stopped), keeping nothing.
 */
import type { ChangeStream, ChangeStreamDocument, Collection, Db } from "mongodb";
import { ObjectId } from "mongodb";
import { COLLECTION } from "../../../../common/store/mongodb/layout.ts";
import type { FeedCursor } from "../../../model/record-values.ts";
import type { ChangePage } from "../../ports/change-log-port.ts";
import { answerRead, type OutsideAction } from "./answer-read.ts";
import type { FeedEvent, OutboxDocument, ScanRequest, StreamEvent } from "./feed-events.ts";
import { CLOSED, type FeedState, step } from "./feed-machine.ts";
import { type ClusterTime, decodePosition, encodePosition, type ResumePoint } from "./feed-position.ts";
import {
  fromTimestamp,
  outboxDocumentOf,
  type StoredOutboxDocument,
  toTimestamp,
} from "./outbox-document.ts";
import { nextScanKey, scanPageFilter, scanPageSort } from "./scan-page.ts";

export interface ChangeStreamFeedOptions {
  /** How long a pull waits on the server for new events before answering with none, ms (default 50). */
  awaitMs?: number;
  /** A stream not read for this long is closed, ms (default 60000). */
  idleCloseMs?: number;
  /** Outbox documents per scan page (default 500). */
  scanPage?: number;
}

/** The change feed over one database's outbox. */
export interface ChangeStreamFeed {
  /** The port's `readChanges`. @throws Error for a cursor that is not this engine's; the driver's error when the read fails. */
  read(after: FeedCursor | null, limit: number): Promise<ChangePage>;
  /**
   * Keeps nothing held once the reads under way are answered: the next read starts over from its
   * position (retention deleted entries, which a read from behind a saved reader could be served).
   */
  forget(): void;
  close(): Promise<void>;
}

type Outbox = Collection<StoredOutboxDocument>;

/** The cluster time a majority has committed: the scan reads at it, so the stream can go on from it. */
async function majorityTime(db: Db): Promise<ClusterTime> {
  const hello = await db.admin().command({ hello: 1 });
  const ts = hello.lastWrite?.majorityOpTime?.ts;
  if (!ts) throw new Error("the server reports no majority-committed time (is it a replica set?)");
  return fromTimestamp(ts);
}

/** One page of the outbox scan, read at `readAt` (a snapshot), in the change_log_commit index's order. */
async function scanPage(db: Db, request: ScanRequest, page: number): Promise<FeedEvent> {
  const readAt = request.readAt ?? (await majorityTime(db));
  const reply = await db.command({
    find: COLLECTION.changeLog,
    filter: scanPageFilter(request),
    sort: scanPageSort(request),
    hint: "change_log_commit",
    limit: page,
    singleBatch: true,
    readConcern: { level: "snapshot", atClusterTime: toTimestamp(readAt) },
  });
  const stored = (reply.cursor?.firstBatch ?? []) as StoredOutboxDocument[];
  return {
    type: "scanned",
    docs: stored.map(outboxDocumentOf),
    readAt,
    next: nextScanKey(request, stored, page),
  };
}

/** A change-stream event as the machine reads it; an invalidate (the outbox dropped or renamed) is an error. */
function streamEventOf(change: ChangeStreamDocument<StoredOutboxDocument>): StreamEvent | Error | null {
  if (change.operationType === "invalidate")
    return new Error("the change log's collection was dropped or renamed");
  if (change.operationType !== "insert" || !change.clusterTime) return null;
  const doc: OutboxDocument = outboxDocumentOf(change.fullDocument);
  return {
    token: String((change._id as { _data?: unknown })._data),
    ts: fromTimestamp(change.clusterTime),
    doc,
  };
}

export function createChangeStreamFeed(db: Db, options: ChangeStreamFeedOptions = {}): ChangeStreamFeed {
  const { awaitMs = 50, idleCloseMs = 60_000, scanPage: page = 500 } = options;
  const outbox: Outbox = db.collection<StoredOutboxDocument>(COLLECTION.changeLog);
  const holder: { state: FeedState } = { state: CLOSED };
  let stream: ChangeStream<StoredOutboxDocument> | null = null;
  let queue: Promise<unknown> = Promise.resolve();
  let idle: ReturnType<typeof setTimeout> | null = null;

  const closeStream = async () => {
    const open = stream;
    stream = null;
    await open?.close().catch(() => undefined);
  };

  const open = (from: ResumePoint): FeedEvent => {
    const position =
      "startAfter" in from
        ? { startAfter: { _data: from.startAfter } }
        : { startAtOperationTime: toTimestamp(from.startAtOperationTime) };
    // The driver opens the cursor on the first pull: a position the server refuses fails there.
    stream = outbox.watch<StoredOutboxDocument>(
      [{ $match: { operationType: { $in: ["insert", "invalidate"] } } }],
      {
        ...position,
        maxAwaitTimeMS: awaitMs,
      },
    );
    return { type: "opened" };
  };

  const pull = async (max: number): Promise<FeedEvent> => {
    const events: StreamEvent[] = [];
    while (events.length < max && stream) {
      const change = await stream.tryNext();
      if (change === null) break;
      const event = streamEventOf(change);
      if (event instanceof Error) throw event;
      if (event) events.push(event);
    }
    return { type: "received", events };
  };

  const stamp = async (docs: { id: string; ct: ClusterTime }[]): Promise<FeedEvent> => {
    // Only a document not stamped yet: the first stamp is the commit time every later scan orders by.
    await outbox.bulkWrite(
      docs.map(({ id, ct }) => ({
        updateOne: { filter: { _id: new ObjectId(id), ct: null }, update: { $set: { ct: toTimestamp(ct) } } },
      })),
      { ordered: false, writeConcern: { w: "majority" } },
    );
    return { type: "stamped" };
  };

  /** Carries out one action that reaches outside the machine; the event it led to. */
  const perform = async (action: OutsideAction): Promise<FeedEvent | null> => {
    switch (action.type) {
      case "close":
        await closeStream();
        return null;
      case "open":
        return open(action.from);
      case "pull":
        return pull(action.max);
      case "stamp":
        return stamp(action.docs);
      case "scan":
        return scanPage(db, action.request, page);
    }
  };

  /** Answers a read after `after` with the entries the machine hands (their positions as cursors). */
  const run = async (first: FeedEvent, after: FeedCursor | null): Promise<ChangePage> => {
    const handed = await answerRead(holder, first, perform);
    const entries = handed.map(({ entry, position }) => ({ ...entry, cursor: encodePosition(position) }));
    return { entries, next: entries.at(-1)?.cursor ?? after };
  };

  /** After the reads under way: the machine told the reader is gone (it keeps nothing), the stream closed. */
  const forget = () => {
    queue = queue.then(async () => {
      holder.state = step(holder.state, { type: "readerGone" }).state;
      await closeStream();
    });
  };

  const armIdle = () => {
    if (idle) clearTimeout(idle);
    idle = setTimeout(forget, idleCloseMs);
    idle.unref?.();
  };

  return {
    read(after, limit) {
      const position = decodePosition(after);
      const result = queue.then(() => run({ type: "read", after: position, limit }, after));
      queue = result.catch(() => undefined);
      armIdle();
      return result;
    },
    forget,
    async close() {
      if (idle) clearTimeout(idle);
      await queue;
      holder.state = step(holder.state, { type: "readerGone" }).state;
      await closeStream();
    },
  };
}
