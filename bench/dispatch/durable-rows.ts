/**
 * The durable baseline's delivery log: one row per delivery (its id, webhook,
 * status code, the first bytes of the answer, when it started and how long it
 * took) in an SQLite file opened the way the service opens its store (WAL,
 * synchronous NORMAL: `openSqliteConnection`). Group commit: the rows of
 * deliveries finished in one turn of the event loop are written in one
 * transaction, and each delivery's promise resolves once its row is committed,
 * so a job is completed in BullMQ only after its row is durable.
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
  /** Writes `row` in the next group commit; resolves once it is committed. */
  write(row: DeliveryRow): Promise<void>;
  /** Commits what waits, then closes the file. */
  close(): Promise<void>;
}

/** Opens (creating when absent) the log at `path`. */
export function openDurableRows(path: string): DurableRows {
  const db: Database = openSqliteConnection(path);
  db.run(`CREATE TABLE IF NOT EXISTS delivered (
    delivery_id TEXT PRIMARY KEY,
    webhook_id TEXT NOT NULL,
    status_code INTEGER NOT NULL,
    response_body TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL
  )`);
  const insert = db.query(
    "INSERT OR REPLACE INTO delivered (delivery_id, webhook_id, status_code, response_body, started_at, duration_ms) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const insertAll = db.transaction((rows: DeliveryRow[]) => {
    for (const r of rows)
      insert.run(r.deliveryId, r.webhookId, r.statusCode, r.responseBody, r.startedAt, r.durationMs);
  });

  let rows: DeliveryRow[] = [];
  let waiting: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  const flush = () => {
    const batch = rows;
    const settle = waiting;
    rows = [];
    waiting = [];
    try {
      insertAll(batch);
    } catch (error) {
      for (const w of settle) w.reject(error);
      return;
    }
    for (const w of settle) w.resolve();
  };

  return {
    write: (row) =>
      new Promise<void>((resolve, reject) => {
        if (rows.length === 0) setImmediate(flush);
        rows.push(row);
        waiting.push({ resolve, reject });
      }),
    async close() {
      if (rows.length > 0) flush();
      db.close();
    },
  };
}
