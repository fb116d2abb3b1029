/**
 * The change-log aggregate of the store port: the transactional outbox each
 * mutation writes its changes to, and the saved cursors of the change-feed
 * readers that consume it.
 *
 * The log is kept in P partitions (`feedPartitions()`, fixed when the store
 * is created; api/store/feed-partitions.ts): every entry of a tenant goes to
 * partition `partitionOfTenant(tenantId, P)`, and commit order holds within a
 * partition, not across them. Reads, lags and saved positions are each of one
 * partition, so one reader per partition can run on any process.
 *
 * Positions in a partition are cursors (`FeedCursor`) the engine makes and
 * only the engine reads: an engine may number entries, keep a resume token or
 * anything else. Nothing outside the engine parses, compares or computes with
 * a cursor; it is stored and handed back, to reads of the partition it came
 * from. `null` stands for the partition's start, before every entry.
 */
import type { ChangeEntry, FeedCursor, LoggedChange } from "../../model/record-values.ts";

/** One read of the change log. */
export interface ChangePage {
  /** At most the read's `limit` entries, in commit order. */
  entries: LoggedChange[];
  /** Where the next read goes on from: the cursor of the last entry, or the read's `after` when none came. */
  next: FeedCursor | null;
}

/** Reads of the change log and of the feed readers' cursors. */
export interface ChangeLogReader {
  /**
   * P, how many partitions the log is kept in (≥ 1): fixed when the store was created, the same
   * on every process that opens it. An engine that keeps one order for the whole log has 1.
   */
  feedPartitions(): number;
  /**
   * The entries of `partition` (0 ≤ partition < P) committed after `after` (from the partition's
   * start when null), in commit order, at most `limit` (> 0). Commit order: once an entry has been
   * read, no entry of the partition that commits later is placed before it, so a reader that goes
   * on from the cursor it reached never skips one (an engine that numbers entries when they are
   * written, not when they commit, must hold readers back until the numbers below are settled).
   * The entries of one unit of work are contiguous, in the order they were appended. Entries
   * deleted by retention are simply not there; a cursor stays valid after the entry it points
   * past is deleted.
   * @throws Error when `partition` is not one of the log's, or `after` is not a cursor of it.
   */
  readChanges(partition: number, after: FeedCursor | null, limit: number): Promise<ChangePage>;
  /**
   * The saved cursor of the change-feed reader `name` in `partition`: null before its first save
   * there (the partition's start).
   */
  feedPosition(name: string, partition: number): Promise<FeedCursor | null>;
  /**
   * How far `after` (null: the partition's start) is behind the head of `partition`, read cheaply
   * (a metrics scrape asks, whatever the lag): the entries committed after it and the commit time
   * of the first of them (null when there is none).
   * @throws Error when `partition` is not one of the log's, or `after` is not a cursor of it.
   */
  changeLogLag(partition: number, after: FeedCursor | null): Promise<ChangeLogLag>;
  /**
   * Where, in `partition`, every change-feed reader with a saved cursor has got to (as
   * `pruneChanges` judges it): the entries after it have not been handed on by some reader yet.
   * Null, the partition's start, when no reader has saved a cursor, or one has saved none here.
   * Copying a store copies the entries after it.
   * @throws Error when `partition` is not one of the log's.
   */
  passedByAllReaders(partition: number): Promise<FeedCursor | null>;
}

/** What `changeLogLag` reads. */
export interface ChangeLogLag {
  changes: number;
  /** ms since the epoch; null when no entry follows the cursor. */
  oldestCommittedAt: number | null;
}

/** Writes of the change log and of feed cursors (inside a unit of work). */
export interface ChangeLogWriter {
  /**
   * Appends change-log entries, in the order given, to their tenant's partition; they become
   * readable when the unit of work commits, all at once, after every entry of the partition
   * committed before. Every entry a unit of work appends is of one tenant (one mutation).
   * @throws Error, on an engine with more than one partition, for entries of several tenants in one
   * unit of work (they could not stay contiguous); with one partition they are simply kept.
   */
  appendChanges(entries: readonly ChangeEntry[]): Promise<void>;
  /**
   * Saves the cursor of the change-feed reader `name` in `partition` (a cursor this engine made
   * for that partition, or null for its start), replacing the one saved before there; the
   * reader's positions in other partitions are untouched. Change-log retention keeps, in each
   * partition, whatever a saved reader has not passed (a reader that has saved a position in any
   * partition and none in this one has passed nothing here).
   * @throws Error when `partition` is not one of the log's, or `position` is not a cursor of it.
   */
  setFeedPosition(name: string, partition: number, position: FeedCursor | null, at: number): Promise<void>;
  /**
   * Copying a store: appends entries read from another store's log (`readChanges`), each to its
   * tenant's partition of this log, in the order given, after every entry the partition holds,
   * keeping what they say (tenant, mutation, sequence, commit time, request id; the cursors are
   * this engine's). Unlike `appendChanges` the entries may be of many tenants and units of work;
   * they become readable when the unit of work commits.
   */
  importChanges(entries: readonly ChangeEntry[]): Promise<void>;
}
