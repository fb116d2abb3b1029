/**
 * The dispatcher's port (../delivery-store.ts) over the SQLite store file,
 * opened and migrated by common/store/sqlite/sqlite-engine.ts. WAL mode lets
 * the API and the dispatcher read and write it side by side; writes wait for
 * the other's lock. Writes are group-committed (group-commit.ts): those made
 * in one turn of the event loop share a transaction, because a commit costs
 * far more than the statements in it. A write's promise resolves once its
 * transaction is committed (in the WAL, which a killed process does not lose),
 * so an attempt logged as started before its request is sent is in the log
 * whatever happens to the process after. Webhook rows are kept in memory by version: each attempt
 * reads the webhook's version beside the delivery's status, and the row itself
 * only when that version is one not seen here.
 */
import { setNewest } from "../../bounded-map.ts";
import type { SqliteEngine } from "../../store/sqlite/sqlite-engine.ts";
import { bumpWebhookSetVersion, decodeHeaders, type WebhookRow } from "../../store/sqlite/webhook-rows.ts";
import {
  type AttemptRecord,
  type DeliveryStatus,
  IN_FLIGHT_ERROR,
  OUTCOME_UNKNOWN_ERROR,
  type SentRequest,
} from "../delivery-log.ts";
import type { DeliveryStore, DeliveryWebhook, StoredVariable } from "../delivery-store.ts";
import { createGroupCommit } from "./group-commit.ts";

/** A row of SQL.load: the delivery's (`d`, its status) or the webhook's (`w`, its version). */
type LoadRow = ["d", DeliveryStatus] | ["w", number];

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

/** A webhook definition as read, with the version it was read at. */
interface KnownWebhook {
  version: number;
  webhook: DeliveryWebhook;
}

/** Webhook definitions kept in memory; beyond this many, the one read longest ago is dropped. */
const KNOWN_WEBHOOKS = 1024;

interface VariableRow {
  key: string;
  config_type: StoredVariable["configType"];
  value: string;
}

const SQL = {
  // Two point reads in one statement: a statement's read transaction costs more than either lookup
  // (measured: ~5 µs against ~8 µs for two statements). A join of the two measured twice as slow.
  // Only the webhook's version: with its whole row read and parsed, the load took twice as long
  // (measured on the dispatch bench's store: 7.7–9.8 µs against 4.4–4.6 µs).
  load: `SELECT 'd', status FROM deliveries WHERE tenant_id = ?1 AND id = ?2
    UNION ALL
    SELECT 'w', version FROM webhooks WHERE tenant_id = ?1 AND id = ?3`,
  webhook: `SELECT url, headers, secret, previous_secret, previous_secret_until, enabled, disabled_reason, version
    FROM webhooks
    WHERE tenant_id = ? AND id = ?`,
  count: `UPDATE deliveries SET attempts = attempts + 1, status = ?, updated_at = ?
    WHERE tenant_id = ? AND id = ? RETURNING attempts`,
  // A finished delivery (a duplicate job raced this one) keeps its status; the attempt is logged all the same.
  started: `UPDATE deliveries SET attempts = attempts + 1, updated_at = ?,
      status = CASE WHEN status IN ('pending', 'delivering') THEN 'delivering' ELSE status END
    WHERE tenant_id = ? AND id = ? RETURNING attempts`,
  attempt: `INSERT INTO delivery_attempts
    (tenant_id, delivery_id, attempt, started_at, duration_ms, status_code, response_body, error, in_flight, request)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  unknown: `UPDATE delivery_attempts SET in_flight = 0, error = ?
    WHERE tenant_id = ? AND delivery_id = ? AND in_flight = 1`,
  finish: `UPDATE delivery_attempts
    SET started_at = ?, duration_ms = ?, status_code = ?, response_body = ?, error = ?, in_flight = 0
    WHERE tenant_id = ? AND delivery_id = ? AND attempt = ?`,
  settle: "UPDATE deliveries SET status = ?, updated_at = ? WHERE tenant_id = ? AND id = ?",
  disable: `UPDATE webhooks SET enabled = 0, disabled_reason = ?, disabled_at = ?, version = version + 1, updated_at = ?
    WHERE tenant_id = ? AND id = ?`,
};

/** The delivery store over an opened SQLite engine; it takes the engine's connection over (and closes it). */
export function createSqliteDeliveryStore(engine: SqliteEngine): DeliveryStore {
  const db = engine.connection;
  const write = createGroupCommit(db);

  // The helpers below run inside a group commit's transaction: what each writes lands together or not at all.

  /** Closes the attempts logged before attempt `number` that are still in flight: a stopped dispatcher left them. */
  const closeUnknown = (tenantId: string, deliveryId: string, number: number) => {
    // The first attempt has none before it: the common case skips the statement.
    if (number > 1) db.query(SQL.unknown).run(OUTCOME_UNKNOWN_ERROR, tenantId, deliveryId);
  };

  const insert = (
    tenantId: string,
    deliveryId: string,
    number: number,
    a: AttemptRecord,
    inFlight: boolean,
    request: SentRequest | null,
  ) =>
    db
      .query(SQL.attempt)
      .run(
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

  const start = (tenantId: string, deliveryId: string, startedAt: number, request: SentRequest) => {
    const counted = db
      .query<{ attempts: number }, [number, string, string]>(SQL.started)
      .get(startedAt, tenantId, deliveryId);
    if (!counted) return null;
    closeUnknown(tenantId, deliveryId, counted.attempts);
    const inFlight = {
      startedAt,
      durationMs: 0,
      statusCode: null,
      responseBody: null,
      error: IN_FLIGHT_ERROR,
    };
    insert(tenantId, deliveryId, counted.attempts, inFlight, true, request);
    return counted.attempts;
  };

  const finish = (
    tenantId: string,
    deliveryId: string,
    n: number,
    a: AttemptRecord,
    status: DeliveryStatus,
  ) => {
    db.query(SQL.finish).run(
      a.startedAt,
      a.durationMs,
      a.statusCode,
      a.responseBody,
      a.error,
      tenantId,
      deliveryId,
      n,
    );
    db.query(SQL.settle).run(status, a.startedAt + a.durationMs, tenantId, deliveryId);
  };

  const record = (tenantId: string, deliveryId: string, a: AttemptRecord, status: DeliveryStatus) => {
    const counted = db
      .query<{ attempts: number }, [string, number, string, string]>(SQL.count)
      .get(status, a.startedAt + a.durationMs, tenantId, deliveryId);
    if (!counted) return null;
    closeUnknown(tenantId, deliveryId, counted.attempts);
    insert(tenantId, deliveryId, counted.attempts, a, false, null);
    return counted.attempts;
  };

  /** Disables the webhook and moves its tenant's set version on, as every webhook write does. */
  const disable = (tenantId: string, webhookId: string, reason: string, at: number) => {
    const { changes } = db.query(SQL.disable).run(reason, at, at, tenantId, webhookId);
    if (changes > 0) bumpWebhookSetVersion(db, tenantId);
  };

  // Versions only grow (every change counts one) and ids are never reused, so a definition read at
  // the version the delivery's statement saw is the current one.
  const known = new Map<string, KnownWebhook>();
  /** The webhook as of `version` (or newer), read from the store unless already known. */
  const webhookAt = (tenantId: string, id: string, version: number): DeliveryWebhook | null => {
    const key = `${tenantId}\u0000${id}`;
    const kept = known.get(key);
    if (kept && kept.version >= version) return kept.webhook;
    const row = db.query<DeliveryWebhookRow, [string, string]>(SQL.webhook).get(tenantId, id);
    if (!row) {
      known.delete(key);
      return null;
    }
    // Shared by every attempt until the next change: frozen, so none can alter it for the others.
    const webhook: DeliveryWebhook = Object.freeze({
      tenantId,
      id,
      url: row.url,
      headers: Object.freeze(decodeHeaders(row)),
      sealedSecret: row.secret,
      previousSealedSecret: row.previous_secret,
      previousSecretUntil: row.previous_secret_until,
      enabled: row.enabled === 1,
      disabledReason: row.disabled_reason,
    });
    setNewest(known, key, { version: row.version, webhook }, KNOWN_WEBHOOKS);
    return webhook;
  };

  return {
    async loadDelivery(tenantId, deliveryId, webhookId) {
      const rows = db.query(SQL.load).values(tenantId, deliveryId, webhookId) as LoadRow[];
      let status: DeliveryStatus | null = null;
      let version: number | null = null;
      for (const row of rows) {
        if (row[0] === "d") status = row[1];
        else version = row[1];
      }
      return { status, webhook: version === null ? null : webhookAt(tenantId, webhookId, version) };
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
    startAttempt: (tenantId, deliveryId, startedAt, request) =>
      write(() => start(tenantId, deliveryId, startedAt, request)),
    finishAttempt: (tenantId, deliveryId, number, attempt, status) =>
      write(() => finish(tenantId, deliveryId, number, attempt, status)),
    recordAttempt: (tenantId, deliveryId, attempt, status) =>
      write(() => record(tenantId, deliveryId, attempt, status)),
    disableWebhook: (tenantId, webhookId, reason, at) =>
      write(() => disable(tenantId, webhookId, reason, at)),
    async close() {
      await write.flush();
      db.close();
    },
  };
}
