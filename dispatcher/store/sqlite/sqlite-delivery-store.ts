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

interface WebhookRow {
  tenant_id: string;
  id: string;
  url: string;
  headers: string;
  secret: string;
  enabled: number;
  disabled_reason: string | null;
}

interface VariableRow {
  key: string;
  config_type: StoredVariable["configType"];
  value: string;
}

const SQL = {
  webhook:
    "SELECT tenant_id, id, url, headers, secret, enabled, disabled_reason FROM webhooks WHERE tenant_id = ? AND id = ?",
  status: "SELECT status FROM deliveries WHERE tenant_id = ? AND id = ?",
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
    async findWebhook(tenantId, webhookId): Promise<DeliveryWebhook | null> {
      const row = db.query<WebhookRow, [string, string]>(SQL.webhook).get(tenantId, webhookId);
      if (!row) return null;
      return {
        tenantId: row.tenant_id,
        id: row.id,
        url: row.url,
        headers: JSON.parse(row.headers) as Record<string, string>,
        sealedSecret: row.secret,
        enabled: row.enabled === 1,
        disabledReason: row.disabled_reason,
      };
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
    deliveryStatus: async (tenantId, deliveryId) =>
      db.query<{ status: DeliveryStatus }, [string, string]>(SQL.status).get(tenantId, deliveryId)?.status ??
      null,
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
 * `BEGIN IMMEDIATE` transaction. Each write runs in its own savepoint, so one
 * that throws is rolled back and rejected alone; when the transaction itself
 * fails (the store stayed locked past LOCK_WAIT_MS), every write in it is rejected.
 */
function createGroupCommit(db: Database): GroupCommit {
  type Pending = {
    apply: () => unknown;
    resolve: (value: unknown) => void;
    reject: (error: unknown) => void;
  };
  type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
  let pending: Pending[] = [];
  // Nested inside the batch's transaction, db.transaction uses a savepoint.
  const one = db.transaction((write: Pending) => write.apply());
  const all = db.transaction((writes: Pending[]) =>
    writes.map((write): Outcome => {
      try {
        return { ok: true, value: one(write) };
      } catch (error) {
        return { ok: false, error };
      }
    }),
  );

  const commit = async (writes: Pending[]) => {
    let outcomes: Outcome[];
    try {
      // While the API holds the write lock, wait on a timer: asleep in SQLite, every delivery in flight would stop.
      await beginImmediate(db, LOCK_WAIT_MS);
      try {
        outcomes = all(writes);
        db.run("COMMIT");
      } catch (error) {
        if (db.inTransaction) db.run("ROLLBACK");
        throw error;
      }
    } catch (error) {
      for (const write of writes) write.reject(error);
      return;
    }
    writes.forEach((write, i) => {
      const outcome = outcomes[i] as Outcome;
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.error);
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
