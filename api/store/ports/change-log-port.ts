/**
 * The change-log aggregate of the store port: the transactional outbox each
 * mutation writes its changes to, and the saved cursors of the change-feed
 * readers that consume it.
 *
 * Positions in the log are cursors (`FeedCursor`) the engine makes and only
 * the engine reads: an engine may number entries, keep a resume token, or a
 * position per partition. Nothing outside the engine parses, compares or
 * computes with a cursor; it is stored and handed back. `null` stands for the
 * log's start, before every entry.
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
   * The entries committed after `after` (from the log's start when null), in commit order, at
   * most `limit` (> 0). Commit order: once an entry has been read, no entry that commits later
   * is placed before it, so a reader that goes on from the cursor it reached never skips one
   * (an engine that numbers entries when they are written, not when they commit, must hold
   * readers back until the numbers below are settled). The entries of one unit of work are
   * contiguous, in the order they were appended. Entries deleted by retention are simply not
   * there; a cursor stays valid after the entry it points past is deleted.
   * @throws Error when `after` is not a cursor of this engine's change log.
   */
  readChanges(after: FeedCursor | null, limit: number): Promise<ChangePage>;
  /** The saved cursor of the change-feed reader `name`: null before its first save (the log's start). */
  feedPosition(name: string): Promise<FeedCursor | null>;
  /**
   * How far `after` (null: the log's start) is behind the log's head, read cheaply (a metrics
   * scrape asks, whatever the lag): the entries committed after it and the commit time of the
   * first of them (null when there is none).
   * @throws Error when `after` is not a cursor of this engine's change log.
   */
  changeLogLag(after: FeedCursor | null): Promise<ChangeLogLag>;
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
   * Appends change-log entries, in the order given; they become readable when the unit of work
   * commits, all at once, after every entry committed before.
   */
  appendChanges(entries: readonly ChangeEntry[]): Promise<void>;
  /**
   * Saves the cursor of the change-feed reader `name` (a cursor this engine made, or null for the
   * log's start), replacing the one saved before. Change-log retention keeps whatever a saved
   * reader has not passed.
   */
  setFeedPosition(name: string, position: FeedCursor | null, at: number): Promise<void>;
}
