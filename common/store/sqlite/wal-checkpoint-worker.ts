/**
 * The WAL checkpointer's thread (started by wal-checkpointer.ts): its own
 * connection to the store file, a PASSIVE checkpoint every `everyMs` — it
 * copies what it can without waiting for readers or blocking the writer —
 * so the process's writer commits without ever running a checkpoint (and
 * its fsync) itself. While writes go on without a pause the WAL is never
 * wholly copied at the moment a write begins, which is when SQLite starts it
 * over; so past `restartPages` a RESTART checkpoint waits for the writer's
 * transaction to end, copies the little the passive ones left, and has the
 * next write start the WAL over (the writer waits meanwhile, on a timer).
 * Says "stopped" once its connection is closed.
 */
import { Database } from "bun:sqlite";

declare const self: Worker;

interface Start {
  path: string;
  everyMs: number;
  restartPages: number;
}

let db: Database | null = null;
let timer: ReturnType<typeof setInterval> | null = null;

self.onmessage = (event: MessageEvent<Start | "stop">) => {
  if (event.data === "stop") {
    if (timer) clearInterval(timer);
    db?.close();
    db = null;
    self.postMessage("stopped");
    return;
  }
  const { path, everyMs, restartPages } = event.data;
  const own = new Database(path, { strict: true });
  db = own;
  // A RESTART waits this long for the writer (SQLite's busy handler, asleep on this thread only).
  own.run("PRAGMA busy_timeout = 200");
  const checkpoint = own.query<{ busy: number; log: number; checkpointed: number }, []>(
    "PRAGMA wal_checkpoint(PASSIVE)",
  );
  const restart = own.query("PRAGMA wal_checkpoint(RESTART)");
  timer = setInterval(() => {
    try {
      const done = checkpoint.get();
      if (done && done.log > restartPages) restart.get();
    } catch {
      // Busy past the wait, or the file going away at shutdown: the next tick tries again.
    }
  }, everyMs);
};
