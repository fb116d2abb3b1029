/**
 * The DeliveryStore over the embedded SQLite store file (`DATA_DIR/store.sqlite`)
 * that the API process creates and migrates. WAL mode lets the two processes
 * read and write it side by side; writes wait for the other's lock (busy_timeout).
 * Delivery-log writes are group-committed: those made in one turn of the event
 * loop share a transaction (each in its own savepoint), because a commit costs
 * far more than the statements in it.
 */
import { Database } from "bun:sqlite";
import { beginImmediate } from "../../../common/sqlite-write-lock.ts";
import type {
  AttemptRecord,
  DeliveryStatus,
  DeliveryStore,
  DeliveryWebhook,
  StoredVariable,
} from "../../delivery-store.ts";

/** A row of SQL.load: the delivery's (`d`, its status) or the webhook's (`w`, its columns). */
type LoadRow =
  | ["d", DeliveryStatus, null, null, null, null, null]
  | ["w", string, string, string, string, number, string | null];

interface VariableRow {
  key: string;
  config_type: StoredVariable["configType"];
  value: string;
}

const SQL = {
  // Two point reads in one statement: a statement's read transaction costs more than either lookup
  // (measured: ~5 µs against ~8 µs for two statements). A join of the two measured twice as slow.
  load: `SELECT 'd', status, NULL, NULL, NULL, NULL, NULL FROM deliveries WHERE tenant_id = ?1 AND id = ?2
    UNION ALL
    SELECT 'w', id, url, headers, secret, enabled, disabled_reason FROM webhooks WHERE tenant_id = ?1 AND id = ?3`,
  delivering: `UPDATE deliveries SET status = 'delivering', updated_at = ?
    WHERE tenant_id = ? AND id = ? AND status IN ('pending', 'delivering')`,
  count: `UPDATE deliveries SET attempts = attempts + 1, status = ?, updated_at = ?
    WHERE tenant_id = ? AND id = ? RETURNING attempts`,
  attempt: `INSERT INTO delivery_attempts
    (tenant_id, delivery_id, attempt, started_at, duration_ms, status_code, response_body, error)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  disable: `UPDATE webhooks SET enabled = 0, disabled_reason = ?, version = version + 1, updated_at = ?
    WHERE tenant_id = ? AND id = ?`,
};

// How long a write waits for the API to release the store's write lock.
const LOCK_WAIT_MS = 5000;

/**
 * Opens the store file at `path`, creating it empty if absent. The dispatcher
 * may start before the API has migrated the file, so statements are prepared
 * on first use (`db.query` caches them), not here.
 */
export function openSqliteDeliveryStore(path: string): DeliveryStore {
  const db = new Database(path, { create: true, strict: true });
  // First, so that switching to WAL waits for an API that is migrating the file right now.
  db.run(`PRAGMA busy_timeout = ${LOCK_WAIT_MS}`);
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA synchronous = NORMAL");

  const write = createGroupCommit(db);

  // Runs inside a group commit's savepoint: the count and the attempt row land together or not at all.
  const record = (tenantId: string, deliveryId: string, a: AttemptRecord, status: DeliveryStatus) => {
    const counted = db
      .query<{ attempts: number }, [string, number, string, string]>(SQL.count)
      .get(status, a.startedAt + a.durationMs, tenantId, deliveryId);
    if (!counted) return null;
    db.query(SQL.attempt).run(
      tenantId,
      deliveryId,
      counted.attempts,
      a.startedAt,
      a.durationMs,
      a.statusCode,
      a.responseBody,
      a.error,
    );
    return counted.attempts;
  };

  return {
    async loadDelivery(tenantId, deliveryId, webhookId) {
      const rows = db.query(SQL.load).values(tenantId, deliveryId, webhookId) as LoadRow[];
      let status: DeliveryStatus | null = null;
      let webhook: DeliveryWebhook | null = null;
      for (const row of rows) {
        if (row[0] === "d") status = row[1];
        else
          webhook = {
            tenantId,
            id: row[1],
            url: row[2],
            headers: JSON.parse(row[3]) as Record<string, string>,
            sealedSecret: row[4],
            enabled: row[5] === 1,
            disabledReason: row[6],
          };
      }
      return { status, webhook };
    },
    async findVariables(tenantId, keys) {
      if (keys.length === 0) return [];
      const marks = keys.map(() => "?").join(", ");
      const sql = `SELECT key, config_type, value FROM config_variables WHERE tenant_id = ? AND key IN (${marks})`;
      return db
        .query<VariableRow, string[]>(sql)
        .all(tenantId, ...keys)
        .map((row) => ({ key: row.key, configType: row.config_type, value: row.value }));
    },
    async markDelivering(tenantId, deliveryId, at) {
      await write(() => db.query(SQL.delivering).run(at, tenantId, deliveryId));
    },
    recordAttempt: (tenantId, deliveryId, attempt, status) =>
      write(() => record(tenantId, deliveryId, attempt, status)),
    async disableWebhook(tenantId, webhookId, reason, at) {
      db.query(SQL.disable).run(reason, at, tenantId, webhookId);
    },
    async close() {
      await write.flush();
      db.close();
    },
  };
}

interface GroupCommit {
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
 * When the transaction cannot begin (the store stayed locked past LOCK_WAIT_MS),
 * every write in it is rejected.
 */
function createGroupCommit(db: Database): GroupCommit {
  type Pending = {
    apply: () => unknown;
    resolve: (value: unknown) => void;
    reject: (error: unknown) => void;
  };
  let pending: Pending[] = [];

  const commit = async (writes: Pending[]): Promise<void> => {
    try {
      // While the API holds the write lock, wait on a timer: asleep in SQLite, every delivery in flight would stop.
      await beginImmediate(db, LOCK_WAIT_MS);
    } catch (error) {
      for (const write of writes) write.reject(error);
      return;
    }
    let values: unknown[];
    try {
      values = writes.map((write) => write.apply());
      db.run("COMMIT");
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
