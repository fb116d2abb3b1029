/**
 * Taking an SQLite store's write lock (`BEGIN IMMEDIATE`) without freezing the
 * process. The API and the dispatcher write the same store file; SQLite's own
 * busy handler waits for the other's lock by sleeping on the calling thread —
 * every request or delivery in flight in the process stops meanwhile. Here
 * the wait is a timer instead. Shared by both processes' SQLite adapters; it
 * takes any connection that runs SQL text and keeps compiled statements, so it
 * imports no driver.
 */

/**
 * What a connection must do for this: run SQL text (compiled anew each time), and a statement for
 * SQL text compiled once and kept by the connection (bun:sqlite's `query`); both throw errors that
 * carry SQLite's code.
 */
export interface SqlRunner {
  run(sql: string): unknown;
  query(sql: string): { run(): unknown };
}

const isBusy = (error: unknown) => (error as { code?: unknown } | null)?.code === "SQLITE_BUSY";

/**
 * Begins an immediate transaction on `db`, retrying on timers (1, 2, 4 … 16 ms
 * apart) while another connection holds the write lock, for at most `waitMs`.
 * The connection's busy_timeout is set back to `waitMs` afterwards (statements
 * that could still meet a lock keep waiting the ordinary way).
 * @throws the SQLITE_BUSY error when the lock stayed taken past `waitMs`, or any other error at once.
 */
export async function beginImmediate(db: SqlRunner, waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs;
  // BEGIN kept compiled (every transaction runs it); the PRAGMAs compiled anew, as SQLite applies a
  // busy_timeout as it compiles the statement: run again, a kept one may leave the timeout as it was.
  const begin = db.query("BEGIN IMMEDIATE");
  for (let pause = 1; ; pause = Math.min(pause * 2, 16)) {
    db.run("PRAGMA busy_timeout = 0");
    try {
      begin.run();
      return;
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error;
    } finally {
      db.run(`PRAGMA busy_timeout = ${waitMs}`);
    }
    await Bun.sleep(pause);
  }
}
