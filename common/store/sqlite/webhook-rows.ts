/**
 * The webhooks table of the SQLite store as both processes meet it: the API's
 * store reads and writes whole definitions (api/store/sqlite/webhook-session.ts),
 * the dispatcher reads what a delivery needs and disables one on 410 Gone
 * (common/delivery-log/sqlite/sqlite-delivery-store.ts). Its migrations are
 * the engine's (migrations.ts).
 */

/** A row of `webhooks` as stored. */
export interface WebhookRow {
  tenant_id: string;
  id: string;
  name: string;
  url: string;
  type: "graphql";
  query: string;
  /** A JSON object of header names to values. */
  headers: string;
  /** Sealed (secret-box.ts). */
  secret: string;
  /** 1 or 0. */
  enabled: number;
  disabled_reason: string | null;
  /** Grows with every change of this webhook. */
  version: number;
  created_at: number;
  updated_at: number;
}

/** The headers column read back. */
export const decodeHeaders = (row: Pick<WebhookRow, "headers">): Record<string, string> =>
  JSON.parse(row.headers) as Record<string, string>;
