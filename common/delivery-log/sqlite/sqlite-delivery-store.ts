/**
 * The dispatcher's port (../delivery-store.ts) over the SQLite store file,
 * opened and migrated by common/store/sqlite/sqlite-engine.ts. WAL mode lets
 * the API and the dispatcher read and write it side by side; writes wait for
 * the other's lock. Writes are group-committed (group-commit.ts): those made
 * in one turn of the event loop share a transaction, because a commit costs
 * far more than the statements in it. A write's promise resolves once its
 * transaction is committed (in the WAL, which a killed process does not lose),
 * so an attempt logged as started before its request is sent is in the log
 * whatever happens to the process after. WAL checkpoints run on a worker
 * thread (common/store/sqlite/wal-checkpointer.ts), as in the API's store:
 * a checkpoint in a commit copies pages and fsyncs on the thread every
 * delivery in flight runs on.
 */

import { setNewest } from "../../bounded-map.ts";
import type { SqliteEngine } from "../../store/sqlite/sqlite-engine.ts";
import { startWalCheckpointer } from "../../store/sqlite/wal-checkpointer.ts";
import { bumpWebhookSetVersion, decodeHeaders, type WebhookRow } from "../../store/sqlite/webhook-rows.ts";
import {
  type AttemptRecord,
  type DeliveryStatus,
  IN_FLIGHT_ERROR,
  OUTCOME_UNKNOWN_ERROR,
  type SentRequest,
} from "../delivery-log.ts";
import type { AttemptStart, AttemptToStart, DeliveryStore, StoredVariable } from "../delivery-store.ts";
import { createGroupCommit } from "./group-commit.ts";

/** What a delivery reads of a webhook's row. */
type DeliveryWebhookRow = Pick<
  WebhookRow,
  | "url"
  | "headers"
  | "secret"
  | "previous_secret"
  | "previous_secret_until"
  | "enabled"
  | "disabled_reason"
  | "version"
>;

/** What starting an attempt reads of its delivery (startable); `version` is null when the webhook was deleted. */
interface StartableRow {
  row: number;
  status: DeliveryStatus;
  attempts: number;
  version: number | null;
}

/** Where an attempt in flight was logged: the rowids of its delivery and of its attempt. */
interface StartedRows {
  delivery: number;
  attempt: number;
}

/** Attempts in flight whose rows are remembered (see inFlightRows): many times the attempts one process has in flight. */
const KEPT_IN_FLIGHT_ROWS = 10_000;

interface VariableRow {
  key: string;
  config_type: StoredVariable["configType"];
  value: string;
}

const SQL = {
  status: "SELECT status FROM deliveries WHERE tenant_id = ? AND id = ?",
  webhook: `SELECT url, headers, secret, previous_secret, previous_secret_until, enabled, disabled_reason, version
    FROM webhooks
    WHERE tenant_id = ? AND id = ?`,
  count: `UPDATE deliveries SET attempts = attempts + 1, status = ?, updated_at = ?
    WHERE tenant_id = ? AND id = ? RETURNING attempts`,
  // What starting an attempt checks, read in its transaction: the delivery's status and count, and
  // its webhook's version (null when deleted). No row: no such delivery (then `version` alone is read).
  // (Both in one row by a LEFT JOIN from a constant row took SQLite 6 times as long.)
  startable: `SELECT d.rowid AS row, d.status, d.attempts,
      (SELECT version FROM webhooks WHERE tenant_id = ?1 AND id = ?3) AS version
    FROM deliveries d WHERE d.tenant_id = ?1 AND d.id = ?2`,
  version: "SELECT version FROM webhooks WHERE tenant_id = ? AND id = ?",
  // The count the read above found, plus one, into the row it found: the write lock, held since, kept both.
  started: "UPDATE deliveries SET attempts = ?1, updated_at = ?2, status = 'delivering' WHERE rowid = ?3",
  attempt: `INSERT INTO delivery_attempts
    (tenant_id, delivery_id, attempt, started_at, duration_ms, status_code, response_body, error, in_flight, request)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  unknown: `UPDATE delivery_attempts SET in_flight = 0, error = ?
    WHERE tenant_id = ? AND delivery_id = ? AND in_flight = 1`,
  finish: `UPDATE delivery_attempts
    SET started_at = ?, duration_ms = ?, status_code = ?, response_body = ?, error = ?, in_flight = 0
    WHERE tenant_id = ? AND delivery_id = ? AND attempt = ?`,
  settle: "UPDATE deliveries SET status = ?, updated_at = ? WHERE tenant_id = ? AND id = ?",
  // The same, into the rows as they were when the attempt started, if they still hold it: found by
  // rowid instead of a search of the key's index (about a fifth of each statement).
  finishRow: `UPDATE delivery_attempts
    SET started_at = ?1, duration_ms = ?2, status_code = ?3, response_body = ?4, error = ?5, in_flight = 0
    WHERE rowid = ?6 AND tenant_id = ?7 AND delivery_id = ?8 AND attempt = ?9`,
  settleRow:
    "UPDATE deliveries SET status = ?1, updated_at = ?2 WHERE rowid = ?3 AND tenant_id = ?4 AND id = ?5",
  disable: `UPDATE webhooks SET enabled = 0, disabled_reason = ?, disabled_at = ?, version = version + 1, updated_at = ?
    WHERE tenant_id = ? AND id = ?`,
};

/** The delivery store over an opened SQLite engine; it takes the engine's connection over (and closes it). */
export function createSqliteDeliveryStore(engine: SqliteEngine): DeliveryStore {
  const db = engine.connection;
  const write = createGroupCommit(db);
  // Commits never checkpoint on this thread (a file's WAL only; in memory there is none).
  const checkpointer = engine.path === ":memory:" ? null : startWalCheckpointer(engine.path, db);
  // Compiled once and held: every attempt runs the same few statements (a lookup of each by its text
  // cost more than some of the statements themselves).
  const q = {
    status: db.query<{ status: DeliveryStatus }, [string, string]>(SQL.status),
    webhook: db.query<DeliveryWebhookRow, [string, string]>(SQL.webhook),
    count: db.query<{ attempts: number }, [DeliveryStatus, number, string, string]>(SQL.count),
    startable: db.query<StartableRow, [string, string, string]>(SQL.startable),
    version: db.query<{ version: number }, [string, string]>(SQL.version),
    started: db.query<unknown, [number, number, number]>(SQL.started),
    attempt: db.query(SQL.attempt),
    unknown: db.query<unknown, [string, string, string]>(SQL.unknown),
    finish: db.query(SQL.finish),
    settle: db.query<unknown, [DeliveryStatus, number, string, string]>(SQL.settle),
    finishRow: db.query(SQL.finishRow),
    settleRow: db.query<unknown, [DeliveryStatus, number, number, string, string]>(SQL.settleRow),
    disable: db.query<unknown, [string, number, number, string, string]>(SQL.disable),
  };

  // Where each attempt in flight was logged (rowids of its delivery and of its attempt), for its
  // finish. Checked by key as it is used: a row since deleted, or its rowid taken by another, is
  // found by key instead. Bounded: an attempt that never finishes here (an error in between) is
  // forgotten in time.
  const inFlightRows = new Map<string, StartedRows>();
  const rowsKey = (tenantId: string, deliveryId: string, number: number) =>
    `${tenantId}\u0000${deliveryId}\u0000${number}`;

  // The helpers below run inside a group commit's transaction: what each writes lands together or not at all.

  /** Closes the attempts logged before attempt `number` that are still in flight: a stopped dispatcher left them. */
  const closeUnknown = (tenantId: string, deliveryId: string, number: number) => {
    // The first attempt has none before it: the common case skips the statement.
    if (number > 1) q.unknown.run(OUTCOME_UNKNOWN_ERROR, tenantId, deliveryId);
  };

  const insert = (
    tenantId: string,
    deliveryId: string,
    number: number,
    a: AttemptRecord,
    inFlight: boolean,
    request: SentRequest | null,
  ) =>
    q.attempt.run(
      tenantId,
      deliveryId,
      number,
      a.startedAt,
      a.durationMs,
      a.statusCode,
      a.responseBody,
      a.error,
      inFlight ? 1 : 0,
      request === null ? null : JSON.stringify(request),
    );

  /**
   * Counts and logs `a` as started, when its delivery is unfinished and its webhook still at the
   * version its request was built from; else writes nothing and says why. One read and the writes,
   * in the transaction: no RETURNING (whose result SQLite buffers in a table of its own) and no
   * second read to tell why nothing was counted.
   */
  const start = (a: AttemptToStart): AttemptStart => {
    const found = q.startable.get(a.tenantId, a.deliveryId, a.webhookId);
    if (!found) {
      // No such delivery: its request leaves unlogged, unless built from a definition changed since.
      const current = q.version.get(a.tenantId, a.webhookId);
      return current?.version === a.webhookVersion ? { kind: "unlogged" } : { kind: "webhook-changed" };
    }
    const { status } = found;
    if (status === "succeeded" || status === "failed") return { kind: "finished", status };
    if (found.version !== a.webhookVersion) return { kind: "webhook-changed" };
    const number = found.attempts + 1;
    q.started.run(number, a.startedAt, found.row);
    closeUnknown(a.tenantId, a.deliveryId, number);
    const inFlight = {
      startedAt: a.startedAt,
      durationMs: 0,
      statusCode: null,
      responseBody: null,
      error: IN_FLIGHT_ERROR,
    };
    const { lastInsertRowid } = insert(a.tenantId, a.deliveryId, number, inFlight, true, a.request);
    const rows = { delivery: found.row, attempt: Number(lastInsertRowid) };
    setNewest(inFlightRows, rowsKey(a.tenantId, a.deliveryId, number), rows, KEPT_IN_FLIGHT_ROWS);
    return { kind: "started", number };
  };

  const finish = (
    tenantId: string,
    deliveryId: string,
    n: number,
    a: AttemptRecord,
    status: DeliveryStatus,
  ) => {
    const key = rowsKey(tenantId, deliveryId, n);
    const rows = inFlightRows.get(key);
    inFlightRows.delete(key);
    const { startedAt, durationMs, statusCode, responseBody, error } = a;
    const at = startedAt + durationMs;
    const byRow =
      rows !== undefined &&
      q.finishRow.run(
        startedAt,
        durationMs,
        statusCode,
        responseBody,
        error,
        rows.attempt,
        tenantId,
        deliveryId,
        n,
      ).changes > 0;
    if (!byRow) q.finish.run(startedAt, durationMs, statusCode, responseBody, error, tenantId, deliveryId, n);
    if (rows === undefined || q.settleRow.run(status, at, rows.delivery, tenantId, deliveryId).changes === 0)
      q.settle.run(status, at, tenantId, deliveryId);
  };

  const record = (tenantId: string, deliveryId: string, a: AttemptRecord, status: DeliveryStatus) => {
    const counted = q.count.get(status, a.startedAt + a.durationMs, tenantId, deliveryId);
    if (!counted) return null;
    closeUnknown(tenantId, deliveryId, counted.attempts);
    insert(tenantId, deliveryId, counted.attempts, a, false, null);
    return counted.attempts;
  };

  /** Disables the webhook and moves its tenant's set version on, as every webhook write does. */
  const disable = (tenantId: string, webhookId: string, reason: string, at: number) => {
    const { changes } = q.disable.run(reason, at, at, tenantId, webhookId);
    if (changes > 0) bumpWebhookSetVersion(db, tenantId);
  };

  return {
    async loadDelivery(tenantId, deliveryId, webhookId) {
      // One read transaction for both: the delivery's status and its webhook as of the same moment.
      return db.transaction(() => {
        const delivery = q.status.get(tenantId, deliveryId);
        const row = q.webhook.get(tenantId, webhookId);
        const webhook = row && {
          tenantId,
          id: webhookId,
          url: row.url,
          headers: decodeHeaders(row),
          sealedSecret: row.secret,
          previousSealedSecret: row.previous_secret,
          previousSecretUntil: row.previous_secret_until,
          enabled: row.enabled === 1,
          disabledReason: row.disabled_reason,
          version: row.version,
        };
        return { status: delivery?.status ?? null, webhook };
      })();
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
    startAttempt: (attempt) => write(() => start(attempt)),
    finishAttempt: (tenantId, deliveryId, number, attempt, status) =>
      write(() => finish(tenantId, deliveryId, number, attempt, status)),
    recordAttempt: (tenantId, deliveryId, attempt, status) =>
      write(() => record(tenantId, deliveryId, attempt, status)),
    disableWebhook: (tenantId, webhookId, reason, at) =>
      write(() => disable(tenantId, webhookId, reason, at)),
    async close() {
      await write.flush();
      await checkpointer?.stop();
      db.close();
    },
  };
}
