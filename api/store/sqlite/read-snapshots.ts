/**
 * Read snapshots shared by the reads of one turn of the event loop.
 *
 * In autocommit mode every SQLite statement takes and drops the file's locks
 * (system calls that cost more than the lookups themselves). Here the first
 * read of a turn opens a read transaction and the turn's end (`setImmediate`)
 * closes it, so the statements of a request, and of the requests that came
 * in with it, share one set of locks and one snapshot (several, if a request
 * waits on I/O or this process commits meanwhile).
 *
 * Freshness: a read sees every commit that finished before the request it
 * serves arrived.
 * - The first request of a turn (`arrived`) drops a snapshot opened earlier
 *   in that turn (by a timer, say): the requests that one poll of the loop
 *   delivered all arrived before the snapshot that serves them began.
 * - This process's own commits (`drop`, called before each) drop it too, so a
 *   read after a write sees the write.
 * - A snapshot never outlives its turn, so it never holds back a checkpoint
 *   for long.
 * (The dispatcher reads without this, on its writer connection: measured, a
 * separate snapshot reader gained it nothing.)
 */

/** What a connection must do for this: prepare statements, and say whether a transaction is open. */
export interface SnapshotConnection {
  prepare(sql: string): { run(): unknown };
  readonly inTransaction: boolean;
}

export interface ReadSnapshots {
  /** Call before a read: opens the turn's snapshot unless one is open. */
  enter(): void;
  /** Call as each request arrives: the first of a turn starts the snapshots that serve it afresh. */
  arrived(): void;
  /** Call before this process commits, or whenever the next read must see every commit finished by now. Never throws. */
  drop(): void;
}

export function createReadSnapshots(db: SnapshotConnection): ReadSnapshots {
  const begin = db.prepare("BEGIN");
  const commit = db.prepare("COMMIT");
  const rollback = db.prepare("ROLLBACK");
  let open = false;
  let requestsThisTurn = false;
  let endScheduled = false;

  /**
   * Ends the snapshot. Never throws: a read transaction has nothing to keep, so a COMMIT that
   * fails is rolled back instead; a connection that can do neither is closed and holds nothing.
   */
  const drop = () => {
    if (!open) return;
    open = false;
    try {
      // A failed statement may have ended the transaction already.
      if (db.inTransaction) commit.run();
    } catch {
      try {
        if (db.inTransaction) rollback.run();
      } catch {
        // Closed.
      }
    }
  };
  const endTurn = () => {
    endScheduled = false;
    requestsThisTurn = false;
    drop();
  };
  const scheduleEnd = () => {
    if (endScheduled) return;
    endScheduled = true;
    setImmediate(endTurn);
  };

  return {
    enter() {
      if (open) return;
      // A transaction left open (it cannot be, short of a failed ROLLBACK) is taken over and ended with the turn.
      if (!db.inTransaction) begin.run();
      open = true;
      scheduleEnd();
    },
    arrived() {
      if (requestsThisTurn) return;
      requestsThisTurn = true;
      drop();
      scheduleEnd();
    },
    drop,
  };
}
