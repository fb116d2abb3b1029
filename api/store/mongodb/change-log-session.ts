/**
 * The change-log part of a MongoDB session: the outbox a unit of work
 * appends to (one document per unit, inserted at its end in its transaction,
 * so it commits with the records or not at all), the feed readers' saved
 * cursors, the lag, and retention. Reading the log is the change feed's
 * (feed/change-stream-feed.ts): the outbox watched by a change stream.
 */
import type { ClientSession, Db } from "mongodb";
import { COLLECTION } from "../../../common/store/mongodb/layout.ts";
import type { ChangeEntry, FeedCursor } from "../../model/record-values.ts";
import type { ChangeLogReader, ChangeLogWriter } from "../ports/change-log-port.ts";
import type { RetentionWriter } from "../ports/retention-port.ts";
import type { ChangeStreamFeed } from "./feed/change-stream-feed.ts";
import { decodePosition, encodePosition, type FeedPosition } from "./feed/feed-position.ts";
import { fromTimestamp, newOutboxDocument, type StoredOutboxDocument } from "./feed/outbox-document.ts";
import { planPrune, pruneCandidates } from "./feed/prune-plan.ts";
import { lagPipeline, passedByAll } from "./feed/readers-passed.ts";

interface SavedPosition {
  _id: string;
  cursor: string | null;
  at: number;
}

/** A unit of work's part of the change log: what it appended, written at its end. */
export interface ChangeLogUnit {
  /** Inserts the unit's outbox document (nothing when none was appended). */
  flush(): Promise<void>;
}

/** The MongoDB engine's change log is one partition, read by one change stream. */
const MONGODB_FEED_PARTITIONS = 1;

/** @throws Error for a partition the log does not have (the port's contract). */
function assertTheOnePartition(partition: number): void {
  if (partition !== 0)
    throw new Error(`the MongoDB store's change log has one partition, not partition ${partition}`);
}

/**
 * The change log's members on `db`: inside a unit of work when `session` is given (its writes in
 * the transaction, its entries in `unit`), else reads outside any.
 */
export function createChangeLogSession(
  db: Db,
  feed: ChangeStreamFeed,
  session: ClientSession | null,
  unit: ChangeEntry[] | null,
): ChangeLogReader & ChangeLogWriter & Pick<RetentionWriter, "pruneChanges"> & ChangeLogUnit {
  const outbox = db.collection<StoredOutboxDocument>(COLLECTION.changeLog);
  const positions = db.collection<SavedPosition>(COLLECTION.feedPositions);
  const inUnit = session ? { session } : {};
  /** Every saved reader's position (the single partition's). */
  const savedPositions = async () =>
    (await positions.find({}, inUnit).toArray()).map((row) =>
      decodePosition(row.cursor as FeedCursor | null),
    );

  return {
    // One partition, one change stream over the outbox; readers per partition are the next step.
    feedPartitions: () => MONGODB_FEED_PARTITIONS,
    // Async, so that a partition the log lacks is a rejection, as every other failure of a read.
    async readChanges(partition, after, limit) {
      assertTheOnePartition(partition);
      return feed.read(after, limit);
    },
    async feedPosition(name, partition) {
      assertTheOnePartition(partition);
      const saved = await positions.findOne({ _id: name }, inUnit);
      if (!saved?.cursor) return null;
      // A cursor of another engine's (or damaged) fails here, not in the reader's next read.
      decodePosition(saved.cursor as FeedCursor);
      return saved.cursor as FeedCursor;
    },
    async changeLogLag(partition, after) {
      assertTheOnePartition(partition);
      const [row] = await outbox
        .aggregate<{ changes: number; oldest: number | null }>(lagPipeline(decodePosition(after)), inUnit)
        .toArray();
      return { changes: row?.changes ?? 0, oldestCommittedAt: row?.oldest ?? null };
    },
    async appendChanges(entries) {
      if (unit === null) throw new Error("appendChanges runs inside a unit of work");
      unit.push(...entries);
    },
    async setFeedPosition(name, partition, position, at) {
      assertTheOnePartition(partition);
      const cursor = position === null ? null : encodePosition(decodePosition(position) as FeedPosition);
      await positions.updateOne({ _id: name }, { $set: { cursor, at } }, { upsert: true, ...inUnit });
    },
    async passedByAllReaders(partition) {
      assertTheOnePartition(partition);
      const low = passedByAll(await savedPositions());
      // The lowest reader's own place (in a scan or the stream): a cursor readChanges goes on from.
      return low === null ? null : encodePosition(low);
    },
    async importChanges(entries) {
      if (unit === null) throw new Error("importChanges runs inside a unit of work");
      // Into the unit's one outbox document, after what it appended: one transaction commits at one
      // cluster time, and the feed places an entry by (commit time, index in its document), so a
      // unit of work writes one document, whatever tenants and mutations it holds.
      unit.push(...entries);
    },
    async pruneChanges(before, limit) {
      const low = passedByAll(await savedPositions());
      if (low === null) return 0;
      const candidates = await outbox
        .find(pruneCandidates(low, before), inUnit)
        .sort({ at: 1, _id: 1 })
        .limit(limit)
        .toArray();
      const plan = planPrune(low, candidates, before, limit);
      if (plan.deletes.length > 0) await outbox.deleteMany({ _id: { $in: plan.deletes } }, inUnit);
      for (const trim of plan.trims) await outbox.updateOne({ _id: trim._id }, trim.update, inUnit);
      // Entries the feed holds for a read from behind a saved reader would outlive their deletion.
      if (plan.entries > 0) feed.forget();
      return plan.entries;
    },
    async flush() {
      if (unit === null || unit.length === 0 || session === null) return;
      // A cluster time the transaction has seen (its snapshot's, once it has read or written): below its commit.
      const seen = session.operationTime ?? session.clusterTime?.clusterTime;
      const lb = seen ? fromTimestamp(seen) : { t: 0, i: 0 };
      await outbox.insertOne(newOutboxDocument(unit, lb), { session });
    },
  };
}
