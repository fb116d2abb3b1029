/**
 * The change-log aggregate of the store port: the transactional outbox each
 * mutation writes its changes to, and the saved positions of the change-feed
 * readers that consume it.
 */
import type { ChangeEntry, LoggedChange } from "../../model/record-values.ts";

/** Reads of the change log and of the feed readers' positions. */
export interface ChangeLogReader {
  /** Change-log entries after `position`, in commit order, at most `limit`. */
  readChanges(afterPosition: number, limit: number): Promise<LoggedChange[]>;
  /** The persisted position of the change-feed reader `name` (0 before its first batch). */
  feedPosition(name: string): Promise<number>;
}

/** Writes of the change log and of feed positions (inside a unit of work). */
export interface ChangeLogWriter {
  /** Appends change-log entries, in the order given. */
  appendChanges(entries: readonly ChangeEntry[]): Promise<void>;
  /** Saves the position of the change-feed reader `name`. */
  setFeedPosition(name: string, position: number, at: number): Promise<void>;
}
