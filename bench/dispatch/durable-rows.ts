/**
 * The durable baselines' delivery log: one row per delivery (its id, webhook,
 * status code, the first bytes of the answer, when it started and how long it
 * took) in an SQLite file opened the way the service opens its store (WAL,
 * synchronous NORMAL: `openSqliteConnection`). Group commit: the writes made
 * in one turn of the event loop go in one transaction, and each write's
 * promise resolves once it is committed, so a job is completed in BullMQ only
 * after its row is durable. Written whole once the answer is in (`write`), or
 * in two phases as the dispatcher's log does (`start` before the request
 * leaves, marked in flight; `finish` with the answer).
 */
import type { Database } from "bun:sqlite";
import { openSqliteConnection } from "../../common/store/sqlite/sqlite-connection.ts";

/** One delivery as the baseline logs it. */
export interface DeliveryRow {
  deliveryId: string;
  webhookId: string;
  statusCode: number;
  responseBody: string;
  startedAt: number;
  durationMs: number;
}

export interface DurableRows {
  /** Writes `row` whole in the next group commit; resolves once it is committed. */
  write(row: DeliveryRow): Promise<void>;
  /** Writes the row of a delivery whose request is about to leave, in flight (no answer yet). */
  start(row: Pick<DeliveryRow, "deliveryId" | "webhookId" | "startedAt">): Promise<void>;
  /** Fills in the answer of a row `start` wrote. */
  finish(row: DeliveryRow): Promise<void>;
  /** Commits what waits, then closes the file. */
  close(): Promise<void>;
}

/** Opens (creating when absent) the log at `path`. */
export function openDurableRows(path: string): DurableRows {
  const db: Database = openSqliteConnection(path);
  db.run(`CREATE TABLE IF NOT EXISTS delivered (
    delivery_id TEXT PRIMARY KEY,
    webhook_id TEXT NOT NULL,
    status_code INTEGER,
    response_body TEXT,
    started_at INTEGER NOT NULL,
    duration_ms INTEGER,
    in_flight INTEGER NOT NULL DEFAULT 0
  )`);
  const insert = db.query(
    "INSERT OR REPLACE INTO delivered (delivery_id, webhook_id, status_code, response_body, started_at, duration_ms) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const started = db.query(
    "INSERT OR REPLACE INTO delivered (delivery_id, webhook_id, started_at, in_flight) VALUES (?, ?, ?, 1)",
  );
  const finished = db.query(
    "UPDATE delivered SET status_code = ?, response_body = ?, duration_ms = ?, in_flight = 0 WHERE delivery_id = ?",
  );
  const applyAll = db.transaction((writes: (() => void)[]) => {
    for (const apply of writes) apply();
  });

  let writes: (() => void)[] = [];
  let waiting: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  const flush = () => {
    const batch = writes;
    const settle = waiting;
    writes = [];
    waiting = [];
    try {
      applyAll(batch);
    } catch (error) {
      for (const w of settle) w.reject(error);
      return;
    }
    for (const w of settle) w.resolve();
  };
  const commit = (apply: () => void) =>
    new Promise<void>((resolve, reject) => {
      if (writes.length === 0) setImmediate(flush);
      writes.push(apply);
      waiting.push({ resolve, reject });
    });

  return {
    write: (r) =>
      commit(() => {
        insert.run(r.deliveryId, r.webhookId, r.statusCode, r.responseBody, r.startedAt, r.durationMs);
      }),
    start: (r) =>
      commit(() => {
        started.run(r.deliveryId, r.webhookId, r.startedAt);
      }),
    finish: (r) =>
      commit(() => {
        finished.run(r.statusCode, r.responseBody, r.durationMs, r.deliveryId);
      }),
    async close() {
      if (writes.length > 0) flush();
      db.close();
    },
  };
}
