/**
 * Group commit for the dispatcher's SQLite writes: the writes of one turn of
 * the event loop share one transaction, each still atomic on its own.
 */
import type { Database } from "bun:sqlite";
import { SQLITE_LOCK_WAIT_MS } from "../../store/sqlite/sqlite-connection.ts";
import { beginImmediate } from "../../store/sqlite/sqlite-write-lock.ts";

export interface GroupCommit {
  /** Runs `apply` in the next group commit; resolves with its result once committed. */
  <T>(apply: () => T): Promise<T>;
  /** Commits the waiting writes now; resolves once they (and any batch under way) are committed. */
  flush(): Promise<void>;
}

/**
 * Collects the writes of one event-loop turn and commits them in one
 * `BEGIN IMMEDIATE` transaction. When a write throws, the whole batch is rolled
 * back and its writes are run again one transaction each, so only the failing
 * one is rejected (failures are rare: no savepoint per write in the common case).
 * When the transaction cannot begin (the store stayed locked past SQLITE_LOCK_WAIT_MS),
 * every write in it is rejected.
 */
export function createGroupCommit(db: Database): GroupCommit {
  type Pending = {
    apply: () => unknown;
    resolve: (value: unknown) => void;
    reject: (error: unknown) => void;
  };
  let pending: Pending[] = [];
  // Kept, as the write lock keeps its own: compiled once, not at every commit.
  const commitStatement = db.query("COMMIT");

  const commit = async (writes: Pending[]): Promise<void> => {
    try {
      // While the API holds the write lock, wait on a timer: asleep in SQLite, every delivery in flight would stop.
      await beginImmediate(db, SQLITE_LOCK_WAIT_MS);
    } catch (error) {
      for (const write of writes) write.reject(error);
      return;
    }
    let values: unknown[];
    try {
      values = writes.map((write) => write.apply());
      commitStatement.run();
    } catch (error) {
      if (db.inTransaction) db.run("ROLLBACK");
      if (writes.length === 1) writes[0]?.reject(error);
      else for (const write of writes) await commit([write]);
      return;
    }
    writes.forEach((write, i) => {
      write.resolve(values[i]);
    });
  };

  // One batch at a time; writes arriving while one waits for the lock go into the next.
  let flushing: Promise<void> | null = null;
  const drain = async () => {
    while (pending.length > 0) {
      const writes = pending;
      pending = [];
      await commit(writes);
    }
    flushing = null;
  };
  const flush = () => {
    flushing ??= drain();
    return flushing;
  };

  const write = <T>(apply: () => T) =>
    new Promise<T>((resolve, reject) => {
      if (pending.length === 0 && !flushing) setImmediate(flush);
      pending.push({ apply, resolve: resolve as (value: unknown) => void, reject });
    });
  return Object.assign(write, { flush });
}
