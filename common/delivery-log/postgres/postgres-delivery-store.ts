/**
 * The DeliveryStore over the PostgreSQL engine (common/store/postgres/, which
 * migrated its database): the API's tables, through Bun's SQL client. Each write
 * is one transaction, resolved once committed, so an attempt logged as started
 * before its request leaves is in the log whatever happens to the process
 * after. Concurrent attempts of one delivery are numbered one after the other:
 * each write starts by updating the delivery's row, which holds its lock to
 * the commit. Disabling a webhook moves its tenant's webhook-set version in the
 * same statement (no triggers, as the API's engine). An attempt is counted by
 * one statement that also checks the delivery unfinished and its webhook at the
 * version its request was built from; only when it counts nothing does a second
 * say why.
 */
import type { SQL } from "bun";
import type { PostgresEngine } from "../../store/postgres/postgres-engine.ts";
import {
  type AttemptRecord,
  type DeliveryStatus,
  IN_FLIGHT_ERROR,
  OUTCOME_UNKNOWN_ERROR,
  type SentRequest,
} from "../delivery-log.ts";
import type { AttemptStart, DeliveryStore, StoredVariable } from "../delivery-store.ts";

const STATEMENTS = {
  load: `SELECT d.status, w.url, w.headers, w.secret, w.previous_secret, w.previous_secret_until, w.enabled,
      w.disabled_reason, w.version
    FROM (SELECT 1) one
    LEFT JOIN deliveries d ON d.tenant_id = $1 AND d.id = $2
    LEFT JOIN webhooks w ON w.tenant_id = $1 AND w.id = $3`,
  variables: `SELECT key, config_type, value FROM config_variables WHERE tenant_id = $1 AND key = ANY($2::text[])`,
  count: `UPDATE deliveries SET attempts = attempts + 1, status = $1, updated_at = $2
    WHERE tenant_id = $3 AND id = $4 RETURNING attempts`,
  started: `UPDATE deliveries SET attempts = attempts + 1, updated_at = $1, status = 'delivering'
    WHERE tenant_id = $2 AND id = $3 AND status IN ('pending', 'delivering')
      AND (SELECT version FROM webhooks WHERE tenant_id = $2 AND id = $4) = $5
    RETURNING attempts`,
  unstarted: `SELECT (SELECT status FROM deliveries WHERE tenant_id = $1 AND id = $2) AS status,
      (SELECT version FROM webhooks WHERE tenant_id = $1 AND id = $3) AS version`,
  attempt: `INSERT INTO delivery_attempts
    (tenant_id, delivery_id, attempt, started_at, duration_ms, status_code, response_body, error, in_flight, request)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
  unknown: `UPDATE delivery_attempts SET in_flight = false, error = $1
    WHERE tenant_id = $2 AND delivery_id = $3 AND in_flight`,
  finish: `UPDATE delivery_attempts
    SET started_at = $1, duration_ms = $2, status_code = $3, response_body = $4, error = $5, in_flight = false
    WHERE tenant_id = $6 AND delivery_id = $7 AND attempt = $8`,
  settle: "UPDATE deliveries SET status = $1, updated_at = $2 WHERE tenant_id = $3 AND id = $4",
  disable: `WITH w AS (UPDATE webhooks SET enabled = false, disabled_reason = $1, disabled_at = $2,
      version = version + 1, updated_at = $2 WHERE tenant_id = $3 AND id = $4 RETURNING tenant_id)
    INSERT INTO webhook_set_versions (tenant_id, version) SELECT tenant_id, 1 FROM w
    ON CONFLICT (tenant_id) DO UPDATE SET version = webhook_set_versions.version + 1`,
};

interface LoadRow {
  status: DeliveryStatus | null;
  url: string | null;
  headers: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  version: number;
}

type Tx = Pick<SQL, "unsafe">;

/** Logs attempt `number` of a counted delivery, closing first the earlier ones a stopped dispatcher left in flight. */
async function logAttempt(
  tx: Tx,
  tenantId: string,
  deliveryId: string,
  number: number,
  a: AttemptRecord,
  inFlight: boolean,
  request: SentRequest | null,
) {
  // The first attempt has none before it: the common case skips the statement.
  if (number > 1) await tx.unsafe(STATEMENTS.unknown, [OUTCOME_UNKNOWN_ERROR, tenantId, deliveryId]);
  await tx.unsafe(STATEMENTS.attempt, [
    tenantId,
    deliveryId,
    number,
    a.startedAt,
    a.durationMs,
    a.statusCode,
    a.responseBody,
    a.error,
    inFlight,
    request === null ? null : JSON.stringify(request),
  ]);
}

const counted = (rows: { attempts: number }[]) => rows[0]?.attempts ?? null;

/** The dispatcher's port on an opened engine; closing the port closes the engine's pool. */
export function createPostgresDeliveryStore(engine: PostgresEngine): DeliveryStore {
  const { sql } = engine;
  return {
    async loadDelivery(tenantId, deliveryId, webhookId) {
      const [row] = (await sql.unsafe(STATEMENTS.load, [tenantId, deliveryId, webhookId])) as LoadRow[];
      const webhook =
        row?.url == null
          ? null
          : {
              tenantId,
              id: webhookId,
              url: row.url,
              headers: JSON.parse(row.headers) as Record<string, string>,
              sealedSecret: row.secret,
              previousSealedSecret: row.previous_secret,
              previousSecretUntil:
                row.previous_secret_until === null ? null : Number(row.previous_secret_until),
              enabled: row.enabled,
              disabledReason: row.disabled_reason,
              version: Number(row.version),
            };
      return { status: row?.status ?? null, webhook };
    },
    async findVariables(tenantId, keys) {
      if (keys.length === 0) return [];
      const rows = (await sql.unsafe(STATEMENTS.variables, [tenantId, keys])) as {
        key: string;
        config_type: StoredVariable["configType"];
        value: string;
      }[];
      return rows.map((row) => ({ key: row.key, configType: row.config_type, value: row.value }));
    },
    startAttempt: (a) =>
      sql.begin(async (tx): Promise<AttemptStart> => {
        const { tenantId, deliveryId, startedAt } = a;
        const params = [startedAt, tenantId, deliveryId, a.webhookId, a.webhookVersion];
        const number = counted(await tx.unsafe(STATEMENTS.started, params));
        if (number === null) {
          const [why] = (await tx.unsafe(STATEMENTS.unstarted, [tenantId, deliveryId, a.webhookId])) as {
            status: DeliveryStatus | null;
            version: number | string | null;
          }[];
          if (why?.status === "succeeded" || why?.status === "failed")
            return { kind: "finished", status: why.status };
          if (why?.version == null || Number(why.version) !== a.webhookVersion)
            return { kind: "webhook-changed" };
          return { kind: "unlogged" };
        }
        const inFlight = {
          startedAt,
          durationMs: 0,
          statusCode: null,
          responseBody: null,
          error: IN_FLIGHT_ERROR,
        };
        await logAttempt(tx, tenantId, deliveryId, number, inFlight, true, a.request);
        return { kind: "started", number };
      }),
    async finishAttempt(tenantId, deliveryId, number, a, status) {
      await sql.begin(async (tx) => {
        await tx.unsafe(STATEMENTS.settle, [status, a.startedAt + a.durationMs, tenantId, deliveryId]);
        await tx.unsafe(STATEMENTS.finish, [
          a.startedAt,
          a.durationMs,
          a.statusCode,
          a.responseBody,
          a.error,
          tenantId,
          deliveryId,
          number,
        ]);
      });
    },
    recordAttempt: (tenantId, deliveryId, a, status) =>
      sql.begin(async (tx) => {
        const at = a.startedAt + a.durationMs;
        const number = counted(await tx.unsafe(STATEMENTS.count, [status, at, tenantId, deliveryId]));
        if (number === null) return null;
        await logAttempt(tx, tenantId, deliveryId, number, a, false, null);
        return number;
      }),
    async disableWebhook(tenantId, webhookId, reason, at) {
      await sql.unsafe(STATEMENTS.disable, [reason, at, tenantId, webhookId]);
    },
    close: () => sql.close(),
  };
}
