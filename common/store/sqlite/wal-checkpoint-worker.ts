/**
 * The WAL checkpointer's thread (started by wal-checkpointer.ts): its own
 * connection to the store file, a PASSIVE checkpoint every `everyMs` — it
 * copies what it can without waiting for readers or blocking the writer —
 * so the process's writer commits without ever running a checkpoint (and
 * its fsync) itself. While writes go on without a pause the WAL is never
 * wholly copied at the moment a write begins, which is when SQLite starts it
 * over; so past `restartPages` a RESTART checkpoint is tried, once, without
 * waiting: when it gets the write lock between two commits and no reader is
 * in the WAL, it copies the little the passive ones left and has the next
 * write start the WAL over (the writer waits meanwhile, on a timer); else it
 * gives up at once and is tried at the next tick. (Waiting for readers would
 * hold the write lock meanwhile: a RESTART that waited up to 200 ms put 250 ms
 * on the p99 of single inserts.)
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
  // Never wait for a lock: a checkpoint that meets one gives up and is tried at the next tick.
  own.run("PRAGMA busy_timeout = 0");
  const checkpoint = own.query<{ busy: number; log: number; checkpointed: number }, []>(
    "PRAGMA wal_checkpoint(PASSIVE)",
  );
  const restart = own.query("PRAGMA wal_checkpoint(RESTART)");
  timer = setInterval(() => {
    try {
      const done = checkpoint.get();
      if (done && done.log > restartPages) restart.get();
    } catch {
      // Busy, or the file going away at shutdown: the next tick tries again.
    }
  }, everyMs);
};
