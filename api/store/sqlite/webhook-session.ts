/** The webhook part of a SQLite session: definitions, the delivery log the dispatcher fills, feed positions. */
import type { Database } from "bun:sqlite";
import type { DeliveryAttempt, DeliveryRecord, StoreWriter, WebhookRecord } from "../store.ts";
import { BOUND_COUNT } from "./record-codec.ts";

type WebhookMethods = Pick<
  StoreWriter,
  | "listWebhooks"
  | "webhookSetVersion"
  | "findWebhook"
  | "findWebhookByName"
  | "listDeliveries"
  | "findDelivery"
  | "listAttempts"
  | "feedPosition"
  | "insertWebhook"
  | "replaceWebhook"
  | "deleteWebhook"
  | "insertDeliveries"
  | "resetDelivery"
  | "setFeedPosition"
>;

interface WebhookRow {
  tenant_id: string;
  id: string;
  name: string;
  url: string;
  type: "graphql";
  query: string;
  headers: string;
  secret: string;
  enabled: number;
  disabled_reason: string | null;
  version: number;
  created_at: number;
  updated_at: number;
}

interface DeliveryRow {
  tenant_id: string;
  id: string;
  webhook_id: string;
  mutation_id: string;
  part: number;
  status: DeliveryRecord["status"];
  body: string;
  attempts: number;
  committed_at: number;
  created_at: number;
  updated_at: number;
}

interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  response_body: string | null;
  error: string | null;
}

const toWebhook = (row: WebhookRow): WebhookRecord => ({
  tenantId: row.tenant_id,
  id: row.id,
  name: row.name,
  url: row.url,
  type: row.type,
  query: row.query,
  headers: JSON.parse(row.headers) as Record<string, string>,
  secret: row.secret,
  enabled: row.enabled === 1,
  disabledReason: row.disabled_reason,
  version: row.version,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toDelivery = (row: DeliveryRow): DeliveryRecord => ({
  tenantId: row.tenant_id,
  id: row.id,
  webhookId: row.webhook_id,
  mutationId: row.mutation_id,
  part: row.part,
  status: row.status,
  body: row.body,
  attempts: row.attempts,
  committedAt: row.committed_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toAttempt = (row: AttemptRow): DeliveryAttempt => ({
  attempt: row.attempt,
  startedAt: row.started_at,
  durationMs: row.duration_ms,
  statusCode: row.status_code,
  responseBody: row.response_body,
  error: row.error,
});

export function createWebhookSession(db: Database): WebhookMethods {
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
      `INSERT INTO webhooks (tenant_id, id, name, url, type, query, headers, secret, enabled, disabled_reason, version, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    replace: db.query(
      `UPDATE webhooks SET name = ?, url = ?, query = ?, headers = ?, enabled = ?, disabled_reason = ?,
         version = version + 1, updated_at = ? WHERE tenant_id = ? AND id = ?`,
    ),
    delete: db.query("DELETE FROM webhooks WHERE tenant_id = ? AND id = ?"),
    findDelivery: db.query<DeliveryRow, [string, string]>(
      "SELECT * FROM deliveries WHERE tenant_id = ? AND id = ?",
    ),
    insertDelivery: db.query(
      `INSERT INTO deliveries (tenant_id, id, webhook_id, mutation_id, part, status, body, attempts, committed_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    ),
    reset: db.query(
      "UPDATE deliveries SET status = 'pending', updated_at = ? WHERE tenant_id = ? AND id = ?",
    ),
    position: db.query<{ position: number }, [string]>("SELECT position FROM feed_positions WHERE name = ?"),
    setPosition: db.query(
      `INSERT INTO feed_positions (name, position, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at`,
    ),
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
    async listDeliveries(tenantId, webhookId, query) {
      const where = ["tenant_id = ?", "webhook_id = ?"];
      const params: (string | number)[] = [tenantId, webhookId];
      if (query.status) where.push("status = ?") && params.push(query.status);
      if (query.since !== undefined) where.push("created_at >= ?") && params.push(query.since);
      if (query.until !== undefined) where.push("created_at < ?") && params.push(query.until);
      if (query.before) {
        where.push("(created_at < ? OR (created_at = ? AND id < ?))");
        params.push(query.before.createdAt, query.before.createdAt, query.before.id);
      }
      const sql = `SELECT * FROM deliveries WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ${BOUND_COUNT}`;
      return db
        .query<DeliveryRow, (string | number)[]>(sql)
        .all(...params, query.limit)
        .map(toDelivery);
    },
    findDelivery: async (tenantId, id) => {
      const row = q.findDelivery.get(tenantId, id);
      return row ? toDelivery(row) : null;
    },
    async listAttempts(tenantId, deliveryIds) {
      const attempts = new Map<string, DeliveryAttempt[]>();
      if (deliveryIds.length === 0) return attempts;
      const marks = deliveryIds.map(() => "?").join(", ");
      const sql = `SELECT * FROM delivery_attempts WHERE tenant_id = ? AND delivery_id IN (${marks}) ORDER BY attempt`;
      for (const row of db.query<AttemptRow, string[]>(sql).all(tenantId, ...deliveryIds)) {
        attempts.set(row.delivery_id, [...(attempts.get(row.delivery_id) ?? []), toAttempt(row)]);
      }
      return attempts;
    },
    feedPosition: async (name) => q.position.get(name)?.position ?? 0,
    insertWebhook: async (w) => {
      q.insert.run(
        w.tenantId,
        w.id,
        w.name,
        w.url,
        w.type,
        w.query,
        JSON.stringify(w.headers),
        w.secret,
        w.enabled ? 1 : 0,
        w.disabledReason,
        w.version,
        w.createdAt,
        w.updatedAt,
      );
    },
    replaceWebhook: async (w) => {
      q.replace.run(
        w.name,
        w.url,
        w.query,
        JSON.stringify(w.headers),
        w.enabled ? 1 : 0,
        w.disabledReason,
        w.updatedAt,
        w.tenantId,
        w.id,
      );
    },
    deleteWebhook: async (tenantId, id) => q.delete.run(tenantId, id).changes > 0,
    insertDeliveries: async (deliveries) => {
      for (const d of deliveries) {
        q.insertDelivery.run(
          d.tenantId,
          d.id,
          d.webhookId,
          d.mutationId,
          d.part,
          d.status,
          d.body,
          d.attempts,
          d.committedAt,
          d.createdAt,
          d.updatedAt,
        );
      }
    },
    resetDelivery: async (tenantId, id, at) => {
      q.reset.run(at, tenantId, id);
    },
    setFeedPosition: async (name, position, at) => {
      q.setPosition.run(name, position, at);
    },
  };
}
