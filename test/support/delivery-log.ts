/**
 * A real store file for dispatcher tests: a fresh directory with
 * `store.sqlite` migrated by the API's migrations, and plain-SQL helpers that
 * write webhooks, config variables and deliveries exactly as the data
 * contract describes them (sealed secrets included) and read the delivery log back.
 */
import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DeliveryJob, deliveryIdOf } from "../../common/delivery-job.ts";
import { configSecretContext, createSecretBox, webhookSecretContext } from "../../common/secret-box.ts";
import { migrate } from "../../common/store/sqlite/migrations.ts";

export const TEST_SECRETS_KEY = "test-secrets-key-test-secrets-key-0123456789";

export interface WebhookFixture {
  id: string;
  url: string;
  headers?: Record<string, string>;
  enabled?: boolean;
  disabledReason?: string | null;
}

export interface LoggedDelivery {
  status: string;
  attempts: number;
}

export interface LoggedAttempt {
  attempt: number;
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  response_body: string | null;
  error: string | null;
}

export interface DeliveryLogFixture {
  dataDir: string;
  tenantId: string;
  /** Adds a webhook; returns its plaintext secret (`whsec_...`). */
  addWebhook(webhook: WebhookFixture): string;
  setVariable(key: string, value: string, configType?: "plain-text" | "secret"): void;
  deleteVariable(key: string): void;
  deleteWebhook(id: string): void;
  /** Changes a webhook as the API's edits do: the given fields, and its version one on. */
  editWebhook(id: string, change: Partial<Pick<WebhookFixture, "url" | "headers" | "enabled">>): void;
  /** Logs a pending delivery of `eventId` (a fresh mutation id by default) and returns its job. */
  addDelivery(webhookId: string, body?: unknown[], eventId?: string): DeliveryJob;
  /** Sets a delivery back to `pending`, as the API does before a manual retry. */
  resetDelivery(id: string): void;
  delivery(id: string): LoggedDelivery | null;
  attempts(id: string): LoggedAttempt[];
  webhook(id: string): { enabled: number; disabled_reason: string | null } | null;
  close(): void;
}

let counter = 0;

export function openDeliveryLog(): DeliveryLogFixture {
  const dataDir = mkdtempSync(join(tmpdir(), "tds-dispatcher-"));
  const db = new Database(join(dataDir, "store.sqlite"), { create: true, strict: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA busy_timeout = 5000");
  migrate(db);
  const box = createSecretBox(TEST_SECRETS_KEY);
  const tenantId = `tenant-${crypto.randomUUID().slice(0, 8)}`;
  const now = Date.now();
  db.query("INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?)").run(tenantId, tenantId, now);

  return {
    dataDir,
    tenantId,
    addWebhook(w) {
      const secret = `whsec_${randomBytes(24).toString("base64")}`;
      db.query(
        `INSERT INTO webhooks (tenant_id, id, name, url, type, query, headers, secret, enabled, disabled_reason, version, created_at, updated_at)
         VALUES (?, ?, ?, ?, 'graphql', 'subscription { schemaJobs { operation } }', ?, ?, ?, ?, 1, ?, ?)`,
      ).run(
        tenantId,
        w.id,
        `hook ${w.id}`,
        w.url,
        JSON.stringify(w.headers ?? {}),
        box.seal(secret, webhookSecretContext(tenantId, w.id)),
        w.enabled === false ? 0 : 1,
        w.disabledReason ?? null,
        now,
        now,
      );
      return secret;
    },
    setVariable(key, value, configType = "plain-text") {
      const stored = configType === "secret" ? box.seal(value, configSecretContext(tenantId, key)) : value;
      db.query(
        `INSERT INTO config_variables (tenant_id, key, config_type, value, description, created_at, updated_at)
         VALUES (?, ?, ?, ?, NULL, ?, ?)
         ON CONFLICT (tenant_id, key) DO UPDATE SET config_type = excluded.config_type, value = excluded.value`,
      ).run(tenantId, key, configType, stored, now, now);
    },
    deleteVariable(key) {
      db.query("DELETE FROM config_variables WHERE tenant_id = ? AND key = ?").run(tenantId, key);
    },
    deleteWebhook(id) {
      db.query("DELETE FROM webhooks WHERE tenant_id = ? AND id = ?").run(tenantId, id);
    },
    editWebhook(id, change) {
      db.query(
        `UPDATE webhooks SET url = coalesce(?, url), headers = coalesce(?, headers), enabled = coalesce(?, enabled),
           version = version + 1
         WHERE tenant_id = ? AND id = ?`,
      ).run(
        change.url ?? null,
        change.headers ? JSON.stringify(change.headers) : null,
        change.enabled === undefined ? null : change.enabled ? 1 : 0,
        tenantId,
        id,
      );
    },
    addDelivery(
      webhookId,
      body = [{ data: { schemaJobs: { operation: "INSERT", n: ++counter } } }],
      eventId = `m-${crypto.randomUUID()}`,
    ) {
      const committedAt = Date.now();
      const job: DeliveryJob = {
        tenantId,
        webhookId,
        eventId,
        deliveryId: deliveryIdOf(webhookId, eventId, committedAt),
        body,
        committedAt,
      };
      db.query(
        `INSERT INTO deliveries (tenant_id, id, webhook_id, event_id, status, body, attempts, committed_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, 'pending', ?, 0, ?, ?, ?)`,
      ).run(tenantId, job.deliveryId, webhookId, eventId, JSON.stringify(body), job.committedAt, now, now);
      return job;
    },
    resetDelivery(id) {
      db.query("UPDATE deliveries SET status = 'pending' WHERE tenant_id = ? AND id = ?").run(tenantId, id);
    },
    delivery: (id) =>
      db
        .query<LoggedDelivery, [string, string]>(
          "SELECT status, attempts FROM deliveries WHERE tenant_id = ? AND id = ?",
        )
        .get(tenantId, id),
    attempts: (id) =>
      db
        .query<LoggedAttempt, [string, string]>(
          `SELECT attempt, started_at, duration_ms, status_code, response_body, error FROM delivery_attempts
           WHERE tenant_id = ? AND delivery_id = ? ORDER BY attempt`,
        )
        .all(tenantId, id),
    webhook: (id) =>
      db
        .query<{ enabled: number; disabled_reason: string | null }, [string, string]>(
          "SELECT enabled, disabled_reason FROM webhooks WHERE tenant_id = ? AND id = ?",
        )
        .get(tenantId, id),
    close() {
      db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
