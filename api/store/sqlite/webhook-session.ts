/** The webhook part of a SQLite session: a tenant's webhook definitions; each write moves their set version on. */
import type { Database } from "bun:sqlite";
import {
  bumpWebhookSetVersion,
  decodeHeaders,
  type WebhookRow,
} from "../../../common/store/sqlite/webhook-rows.ts";
import type { WebhookReader, WebhookRecord, WebhookWriter } from "../ports/webhook-port.ts";
import { uniquely } from "./constraint-errors.ts";

const toWebhook = (row: WebhookRow): WebhookRecord => ({
  tenantId: row.tenant_id,
  id: row.id,
  name: row.name,
  url: row.url,
  type: row.type,
  query: row.query,
  options: row.options === null ? null : JSON.parse(row.options),
  headers: decodeHeaders(row),
  secret: row.secret,
  previousSecret: row.previous_secret,
  previousSecretUntil: row.previous_secret_until,
  enabled: row.enabled === 1,
  disabledReason: row.disabled_reason,
  disabledAt: row.disabled_at,
  enabledBy: row.enabled_by,
  enabledAt: row.enabled_at,
  version: row.version,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const taken = (webhook: WebhookRecord) => `a webhook named '${webhook.name}' exists already`;

export function createWebhookSession(db: Database): WebhookReader & WebhookWriter {
  const q = {
    list: db.query<WebhookRow, [string]>(
      "SELECT * FROM webhooks WHERE tenant_id = ? ORDER BY created_at, id",
    ),
    setVersion: db.query<{ version: number }, [string]>(
      "SELECT version FROM webhook_set_versions WHERE tenant_id = ?",
    ),
    find: db.query<WebhookRow, [string, string]>("SELECT * FROM webhooks WHERE tenant_id = ? AND id = ?"),
    findByName: db.query<WebhookRow, [string, string]>(
      "SELECT * FROM webhooks WHERE tenant_id = ? AND name = ?",
    ),
    insert: db.query(
      `INSERT INTO webhooks (tenant_id, id, name, url, type, query, options, headers, secret, previous_secret,
         previous_secret_until, enabled, disabled_reason, disabled_at, enabled_by, enabled_at, version, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    replace: db.query(
      `UPDATE webhooks SET name = ?, url = ?, type = ?, query = ?, options = ?, headers = ?, enabled = ?,
         disabled_reason = ?, disabled_at = ?, enabled_by = ?, enabled_at = ?, version = version + 1, updated_at = ?
       WHERE tenant_id = ? AND id = ?`,
    ),
    rotate: db.query(
      `UPDATE webhooks SET secret = ?, previous_secret = ?, previous_secret_until = ?,
         version = version + 1, updated_at = ? WHERE tenant_id = ? AND id = ?`,
    ),
    delete: db.query("DELETE FROM webhooks WHERE tenant_id = ? AND id = ?"),
  };

  return {
    listWebhooks: async (tenantId) => q.list.all(tenantId).map(toWebhook),
    webhookSetVersion: async (tenantId) => q.setVersion.get(tenantId)?.version ?? 0,
    findWebhook: async (tenantId, id) => {
      const row = q.find.get(tenantId, id);
      return row ? toWebhook(row) : null;
    },
    findWebhookByName: async (tenantId, name) => {
      const row = q.findByName.get(tenantId, name);
      return row ? toWebhook(row) : null;
    },
    insertWebhook: async (w) => {
      uniquely(taken(w), () =>
        q.insert.run(
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
          w.enabled ? 1 : 0,
          w.disabledReason,
          w.disabledAt,
          w.enabledBy,
          w.enabledAt,
          w.version,
          w.createdAt,
          w.updatedAt,
        ),
      );
      bumpWebhookSetVersion(db, w.tenantId);
    },
    replaceWebhook: async (w) => {
      const { changes } = uniquely(taken(w), () =>
        q.replace.run(
          w.name,
          w.url,
          w.type,
          w.query,
          w.options === null ? null : JSON.stringify(w.options),
          JSON.stringify(w.headers),
          w.enabled ? 1 : 0,
          w.disabledReason,
          w.disabledAt,
          w.enabledBy,
          w.enabledAt,
          w.updatedAt,
          w.tenantId,
          w.id,
        ),
      );
      if (changes > 0) bumpWebhookSetVersion(db, w.tenantId);
    },
    rotateWebhookSecret: async (tenantId, id, r) => {
      const { changes } = q.rotate.run(r.secret, r.previousSecret, r.previousSecretUntil, r.at, tenantId, id);
      if (changes > 0) bumpWebhookSetVersion(db, tenantId);
      return changes > 0;
    },
    deleteWebhook: async (tenantId, id) => {
      const deleted = q.delete.run(tenantId, id).changes > 0;
      if (deleted) bumpWebhookSetVersion(db, tenantId);
      return deleted;
    },
  };
}
