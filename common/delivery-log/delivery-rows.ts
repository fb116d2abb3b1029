/**
 * The delivery log's rows as every SQL engine reads them back, and their records: one mapping for all
 * engines. Engines differ only in how a number or a truth value comes back (SQLite: numbers and 0/1;
 * PostgreSQL: bigints as text, booleans), which `Number` and `Boolean` take either way.
 */
import type { DeliveryAttempt, DeliveryRecord, SentRequest } from "./delivery-log.ts";

type Int = number | string;

export interface DeliveryRow {
  tenant_id: string;
  id: string;
  webhook_id: string;
  event_id: string;
  part: number;
  status: DeliveryRecord["status"];
  body: string;
  test: boolean | number;
  attempts: number;
  committed_at: Int;
  created_at: Int;
  updated_at: Int;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_at: Int;
  duration_ms: Int;
  status_code: number | null;
  response_body: string | null;
  error: string | null;
  /** SentRequest as JSON; null when none was sent or kept. */
  request: string | null;
}

export const deliveryOf = (row: DeliveryRow): DeliveryRecord => ({
  tenantId: row.tenant_id,
  id: row.id,
  webhookId: row.webhook_id,
  eventId: row.event_id,
  part: row.part,
  status: row.status,
  body: row.body,
  test: Boolean(row.test),
  attempts: row.attempts,
  committedAt: Number(row.committed_at),
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
});

export const attemptOf = (row: AttemptRow): DeliveryAttempt => ({
  attempt: row.attempt,
  startedAt: Number(row.started_at),
  durationMs: Number(row.duration_ms),
  statusCode: row.status_code,
  responseBody: row.response_body,
  error: row.error,
  request: row.request === null ? null : (JSON.parse(row.request) as SentRequest),
});
