/**
 * The webhook part of a PostgreSQL session: a tenant's webhook definitions,
 * and their set's version, moved on by the very statement that writes a
 * webhook (a data-modifying CTE), not by a trigger: the engine keeps to what
 * PostgreSQL-wire services without triggers do too.
 */
import { holdsNul, namingNul, uniquely } from "../../../common/store/postgres/pg-errors.ts";
import type { Runner } from "../../../common/store/postgres/runner.ts";
import type { WebhookKind, WebhookReader, WebhookRecord, WebhookWriter } from "../ports/webhook-port.ts";

const COLUMNS = `tenant_id, id, name, url, type, query, options, headers, secret, previous_secret,
  previous_secret_until, enabled, disabled_reason, disabled_at, enabled_by, enabled_at, version, created_at, updated_at`;
/** Appended to a CTE `w` that wrote webhooks (returning their tenant): bumps each tenant's set version. */
const BUMP = `INSERT INTO webhook_set_versions (tenant_id, version) SELECT DISTINCT tenant_id, 1 FROM w
  ON CONFLICT (tenant_id) DO UPDATE SET version = webhook_set_versions.version + 1`;

const SQL = {
  list: `SELECT ${COLUMNS} FROM webhooks WHERE tenant_id = $1 ORDER BY created_at, id`,
  setVersion: "SELECT version FROM webhook_set_versions WHERE tenant_id = $1",
  find: `SELECT ${COLUMNS} FROM webhooks WHERE tenant_id = $1 AND id = $2`,
  findByName: `SELECT ${COLUMNS} FROM webhooks WHERE tenant_id = $1 AND lower(name) = lower($2)`,
  insert: `WITH w AS (INSERT INTO webhooks (${COLUMNS})
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
      RETURNING tenant_id)
    ${BUMP}`,
  replace: `WITH w AS (UPDATE webhooks SET name = $1, url = $2, type = $3, query = $4, options = $5, headers = $6,
      enabled = $7, disabled_reason = $8, disabled_at = $9, enabled_by = $10, enabled_at = $11,
      version = version + 1, updated_at = $12 WHERE tenant_id = $13 AND id = $14
      RETURNING tenant_id)
    ${BUMP}`,
  rotate: `WITH w AS (UPDATE webhooks SET secret = $1, previous_secret = $2, previous_secret_until = $3,
      version = version + 1, updated_at = $4 WHERE tenant_id = $5 AND id = $6
      RETURNING tenant_id)
    ${BUMP} RETURNING 1`,
  delete: `WITH w AS (DELETE FROM webhooks WHERE tenant_id = $1 AND id = $2 RETURNING tenant_id) ${BUMP}`,
};

interface WebhookRow {
  tenant_id: string;
  id: string;
  name: string;
  url: string;
  type: WebhookKind;
  query: string;
  /** What the kind adds (DeferredOptions, ScheduledOptions), as JSON; null for graphql. */
  options: string | null;
  headers: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: string | null;
  enabled_by: string | null;
  enabled_at: string | null;
  version: string;
  created_at: string;
  updated_at: string;
}

const msOrNull = (value: string | null) => (value === null ? null : Number(value));

const toWebhook = (row: WebhookRow): WebhookRecord => ({
  tenantId: row.tenant_id,
  id: row.id,
  name: row.name,
  url: row.url,
  type: row.type,
  query: row.query,
  options: row.options === null ? null : JSON.parse(row.options),
  headers: JSON.parse(row.headers) as Record<string, string>,
  secret: row.secret,
  previousSecret: row.previous_secret,
  previousSecretUntil: msOrNull(row.previous_secret_until),
  enabled: row.enabled,
  disabledReason: row.disabled_reason,
  disabledAt: msOrNull(row.disabled_at),
  enabledBy: row.enabled_by,
  enabledAt: msOrNull(row.enabled_at),
  version: Number(row.version),
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
});

const taken = (webhook: WebhookRecord) => `a webhook named '${webhook.name}' exists already`;

export function createWebhookSession(db: Runner): WebhookReader & WebhookWriter {
  const one = async (sql: string, params: string[]) => {
    const [row] = await db.rows<WebhookRow>(sql, params);
    return row ? toWebhook(row) : null;
  };
  return {
    listWebhooks: async (tenantId) => (await db.rows<WebhookRow>(SQL.list, [tenantId])).map(toWebhook),
    webhookSetVersion: async (tenantId) =>
      Number((await db.rows<{ version: string }>(SQL.setVersion, [tenantId]))[0]?.version ?? 0),
    findWebhook: (tenantId, id) => one(SQL.find, [tenantId, id]),
    // No stored name holds U+0000 (the server refuses it): nothing to find, and no failed read.
    findWebhookByName: async (tenantId, name) =>
      holdsNul(name) ? null : one(SQL.findByName, [tenantId, name]),
    async insertWebhook(w) {
      await uniquely(taken(w), () =>
        namingNul({ name: w.name, url: w.url, query: w.query }, () =>
          db.run(SQL.insert, [
            w.tenantId,
            w.id,
            w.name,
            w.url,
            w.type,
            w.query,
            w.options === null ? null : JSON.stringify(w.options),
            JSON.stringify(w.headers),
            w.secret,
            w.previousSecret,
            w.previousSecretUntil,
            w.enabled,
            w.disabledReason,
            w.disabledAt,
            w.enabledBy,
            w.enabledAt,
            w.version,
            w.createdAt,
            w.updatedAt,
          ]),
        ),
      );
    },
    async replaceWebhook(w) {
      await uniquely(taken(w), () =>
        namingNul({ name: w.name, url: w.url, query: w.query }, () =>
          db.run(SQL.replace, [
            w.name,
            w.url,
            w.type,
            w.query,
            w.options === null ? null : JSON.stringify(w.options),
            JSON.stringify(w.headers),
            w.enabled,
            w.disabledReason,
            w.disabledAt,
            w.enabledBy,
            w.enabledAt,
            w.updatedAt,
            w.tenantId,
            w.id,
          ]),
        ),
      );
    },
    rotateWebhookSecret: async (tenantId, id, r) =>
      (await db.rows(SQL.rotate, [r.secret, r.previousSecret, r.previousSecretUntil, r.at, tenantId, id]))
        .length > 0,
    deleteWebhook: async (tenantId, id) => (await db.run(SQL.delete, [tenantId, id])) > 0,
  };
}
