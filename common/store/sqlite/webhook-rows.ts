/**
 * The webhooks table of the SQLite store as both processes meet it: the API's
 * store reads and writes whole definitions (api/store/sqlite/webhook-session.ts),
 * the dispatcher reads what a delivery needs and disables one on 410 Gone
 * (common/delivery-log/sqlite/sqlite-delivery-store.ts). Each such write moves
 * the tenant's webhook set version here, in the write's transaction. Its
 * migrations are the engine's (migrations.ts).
 */
import type { Database } from "bun:sqlite";

/** A row of `webhooks` as stored. */
export interface WebhookRow {
  tenant_id: string;
  id: string;
  name: string;
  url: string;
  type: "graphql" | "graphql_deferred" | "scheduled";
  query: string;
  /** What the kind adds, as JSON (migration 11); null for graphql. */
  options: string | null;
  /** A JSON object of header names to values. */
  headers: string;
  /** Sealed (secret-box.ts). */
  secret: string;
  /** 1 or 0. */
  enabled: number;
  disabled_reason: string | null;
  /** The secret before the last rotation (sealed), signing too until `previous_secret_until` (ms). */
  previous_secret: string | null;
  previous_secret_until: number | null;
  /** When a 410 Gone last disabled it (ms). */
  disabled_at: number | null;
  /** The user who last enabled it again, and when (ms). */
  enabled_by: string | null;
  enabled_at: number | null;
  /** Grows with every change of this webhook. */
  version: number;
  created_at: number;
  updated_at: number;
}

/** The headers column read back. */
export const decodeHeaders = (row: Pick<WebhookRow, "headers">): Record<string, string> =>
  JSON.parse(row.headers) as Record<string, string>;

/**
 * Moves the tenant's webhook set version on (from 0, none yet, to 1). Every write that changes
 * one of the tenant's webhooks calls it in the same transaction, whichever process makes it:
 * readers cache the tenant's compiled webhooks by this version instead of listing them for
 * every batch, so a write that skipped it would go unseen.
 */
export function bumpWebhookSetVersion(db: Database, tenantId: string): void {
  db.query(
    `INSERT INTO webhook_set_versions (tenant_id, version) VALUES (?, 1)
     ON CONFLICT (tenant_id) DO UPDATE SET version = version + 1`,
  ).run(tenantId);
}
