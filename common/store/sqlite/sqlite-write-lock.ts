/**
 * Taking an SQLite store's write lock (`BEGIN IMMEDIATE`) without freezing the
 * process. The API and the dispatcher write the same store file; SQLite's own
 * busy handler waits for the other's lock by sleeping on the calling thread —
 * every request or delivery in flight in the process stops meanwhile. Here
 * the wait is a timer instead. Shared by both processes' SQLite adapters; it
 * takes any connection that compiles SQL text into statements it keeps, so it
 * imports no driver.
 */

/**
 * What a connection must do for this: a statement for SQL text, compiled once and kept by the
 * connection (bun:sqlite's `query`), whose run throws errors that carry SQLite's code.
 */
export interface SqlRunner {
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
  for (let pause = 1; ; pause = Math.min(pause * 2, 16)) {
    // Kept statements: each transaction runs these three (compiling them each time cost more than running them).
    db.query("PRAGMA busy_timeout = 0").run();
    try {
      db.query("BEGIN IMMEDIATE").run();
      return;
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error;
    } finally {
      db.query(`PRAGMA busy_timeout = ${waitMs}`).run();
    }
    await Bun.sleep(pause);
  }
}
