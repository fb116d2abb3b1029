/**
 * A connection to the SQLite store file, set up the one way every process
 * uses it: WAL (the API and the dispatcher read and write the file side by
 * side), synchronous NORMAL (a commit is durable once in the WAL), foreign
 * keys on, and a busy timeout for the moments another process holds the
 * write lock.
 */
import { Database } from "bun:sqlite";

/** How long a statement or a write lock waits for another process's write lock, in ms. */
export const SQLITE_LOCK_WAIT_MS = 5000;

const isBusy = (error: unknown) => (error as { code?: unknown } | null)?.code === "SQLITE_BUSY";

/**
 * Opens (creating when absent) the store file at `path` (`:memory:`: a private in-memory one).
 * @throws the SQLITE_BUSY error when another process kept the file locked past SQLITE_LOCK_WAIT_MS.
 */
export function openSqliteConnection(path: string): Database {
  const db = new Database(path, { create: true, strict: true });
  try {
    db.run(`PRAGMA busy_timeout = ${SQLITE_LOCK_WAIT_MS}`);
    toWal(db);
    db.run("PRAGMA synchronous = NORMAL");
    db.run("PRAGMA foreign_keys = ON");
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Switches to WAL. SQLite answers SQLITE_BUSY at once, without its busy handler, while another
 * connection is switching a new file or migrating it (the API and the dispatcher start
 * together on a fresh DATA_DIR): tried again every few ms up to SQLITE_LOCK_WAIT_MS. Only at
 * opening, so a blocking wait stops nothing else.
 */
function toWal(db: Database): void {
  const deadline = Date.now() + SQLITE_LOCK_WAIT_MS;
  for (;;) {
    try {
      db.run("PRAGMA journal_mode = WAL");
      return;
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error;
      Bun.sleepSync(5);
    }
  }
}
