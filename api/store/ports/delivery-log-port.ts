/**
 * The delivery-log aggregate of the store port, as the API sees it: the
 * deliveries the change feed logs (pending) and their attempts, which the
 * dispatcher writes through its own port (dispatcher/delivery-store.ts).
 */

export const DELIVERY_STATUSES = ["pending", "delivering", "succeeded", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryRecord {
  tenantId: string;
  id: string;
  webhookId: string;
  mutationId: string;
  /** Which of the mutation's deliveries to the webhook this is, from 0 (see `DeliveryJob.part`). */
  part: number;
  status: DeliveryStatus;
  /** The JSON array sent (as text). */
  body: string;
  attempts: number;
  committedAt: number;
  createdAt: number;
  updatedAt: number;
}

export interface DeliveryAttempt {
  attempt: number;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
}

export interface DeliveryQuery {
  status?: DeliveryStatus;
  /** Created at or after, ms. */
  since?: number;
  /** Created before, ms. */
  until?: number;
  /** Keyset: deliveries created before this (createdAt, id), newest first. */
  before?: { createdAt: number; id: string };
  limit: number;
}

/** Reads of the delivery log. */
export interface DeliveryLogReader {
  /**
   * A webhook's deliveries matching `query`, newest first (`createdAt`, then `id`, both
   * descending), at most `query.limit`.
   */
  listDeliveries(tenantId: string, webhookId: string, query: DeliveryQuery): Promise<DeliveryRecord[]>;
  /** The tenant's delivery with this id, or null. */
  findDelivery(tenantId: string, id: string): Promise<DeliveryRecord | null>;
  /**
   * The attempts of each of these deliveries, in attempt order, by delivery id; a delivery with
   * none has no entry.
   */
  listAttempts(tenantId: string, deliveryIds: readonly string[]): Promise<Map<string, DeliveryAttempt[]>>;
}

/** Writes of the delivery log (inside a unit of work). */
export interface DeliveryLogWriter {
  /**
   * Inserts deliveries if absent: one whose webhook, mutation and part are those of a logged
   * delivery is left as it is (the change feed re-logs a batch it redoes after a crash).
   */
  insertDeliveries(deliveries: readonly DeliveryRecord[]): Promise<void>;
  /** Sets a delivery back to `pending` at `at`, for a manual retry; a missing one is no error. */
  resetDelivery(tenantId: string, id: string, at: number): Promise<void>;
}
