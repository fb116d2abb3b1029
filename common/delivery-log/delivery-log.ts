/**
 * The delivery log's contract, shared by both processes: a delivery per
 * webhook, event and part (the API logs it pending: its change feed for mutations, its event worker for deferred firings and schedule ticks), the
 * attempts the dispatcher logs against it, and the reads, writes and retention
 * steps the API's store offers over them (api/store/ports/delivery-log-port.ts
 * composes these into the store port). The dispatcher's own port over the same
 * log is delivery-store.ts; each engine implements both once
 * (common/delivery-log/sqlite/).
 */

export const DELIVERY_STATUSES = ["pending", "delivering", "succeeded", "failed"] as const;
/** pending: waiting for an attempt; delivering: an attempt is out; succeeded, failed: final. */
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryRecord {
  tenantId: string;
  id: string;
  webhookId: string;
  /** The event it reports (`DeliveryJob.eventId`): a mutation's id, `deferred:<uid>:<dueMs>` or `tick:<ms>`. */
  eventId: string;
  /** Which of the mutation's deliveries to the webhook this is, from 0 (see `DeliveryJob.part`). */
  part: number;
  status: DeliveryStatus;
  /** The JSON array sent (as text). */
  body: string;
  /** An example sent by POST /webhooks/{id}/test, not a change's event. */
  test: boolean;
  attempts: number;
  committedAt: number;
  createdAt: number;
  updatedAt: number;
}

/** What an attempt did: when, how long, the answer's status and first 1 KB of body, or the error. */
export interface AttemptRecord {
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  /** First 1 KB of the answer's body. */
  responseBody: string | null;
  error: string | null;
}

/**
 * The request an attempt sent, as logged when it left: the URL and headers rendered then, with the
 * values of secret config variables replaced by `{{ NAME }}` (the webhook secret is never in a
 * request; its signatures are). The body is the delivery's.
 */
export interface SentRequest {
  url: string;
  headers: Record<string, string>;
}

/**
 * An attempt as logged: its number (from 1, in the order attempts started), what it did, and the
 * request it sent (null when it sent none: the request could not be built, or it was logged before
 * requests were kept).
 */
export interface DeliveryAttempt extends AttemptRecord {
  attempt: number;
  request: SentRequest | null;
}

/** The error an attempt shows while its request is out and its outcome not yet recorded. */
export const IN_FLIGHT_ERROR = "in flight: no outcome yet";

/**
 * The error of an attempt a stopped (killed) dispatcher left in flight: its request may have
 * reached the receiver. Written when the delivery's next attempt is logged.
 */
export const OUTCOME_UNKNOWN_ERROR =
  "outcome unknown: the dispatcher stopped before the outcome was known (the receiver may have got the request)";

/** Which of a webhook's deliveries to list (GET /webhooks/{id}/deliveries). */
export interface DeliveryQuery {
  status?: DeliveryStatus;
  /** Created at or after, ms. */
  since?: number;
  /** Created before, ms. */
  until?: number;
  /** Keyset: deliveries created before this (createdAt, id), newest first: the page after the one ending there. */
  before?: { createdAt: number; id: string };
  limit: number;
}

/** An attempt as copied between stores: as logged, and whether it was still in flight. */
export interface ExportedAttempt extends DeliveryAttempt {
  /** Logged before its request left, its outcome not yet recorded (see `DeliveryStore.startAttempt`). */
  inFlight: boolean;
}

/** A delivery as copied between stores, with every attempt of it in attempt order. */
export interface ExportedDelivery {
  delivery: DeliveryRecord;
  attempts: ExportedAttempt[];
}

/** Reads of the delivery log (the API's). */
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
  /**
   * Copying a store: a page of the tenant's deliveries (of every webhook, deleted ones' included)
   * in id order (by code point), those after the id `after` (null: from the first), at most
   * `limit`, each with all its attempts.
   */
  exportDeliveries(tenantId: string, after: string | null, limit: number): Promise<ExportedDelivery[]>;
}

/** Writes of the delivery log by the API (inside a unit of work). */
export interface DeliveryLogWriter {
  /**
   * Inserts deliveries if absent: one whose webhook, event and part are those of a logged
   * delivery is left as it is (the change feed re-logs a batch it redoes after a crash).
   */
  insertDeliveries(deliveries: readonly DeliveryRecord[]): Promise<void>;
  /** Sets a delivery back to `pending` at `at`, for a manual retry; a missing one is no error. */
  resetDelivery(tenantId: string, id: string, at: number): Promise<void>;
  /**
   * Copying a store: inserts deliveries with their attempts as exported (statuses, counts, in-flight
   * marks and the requests sent kept).
   * @throws Error when the log has a delivery of one of those ids, or of one's webhook, event and part.
   */
  importDeliveries(deliveries: readonly ExportedDelivery[]): Promise<void>;
}

/** Where a delivery stands in the delivery log's age order (oldest first; `id` breaks ties). */
export interface DeliveryAge {
  createdAt: number;
  id: string;
}

/** One step of pruning the delivery log. */
export interface DeliveryPruneStep {
  /** Deliveries deleted, with their attempts. */
  deleted: number;
  /** Where the next step goes on from; null when no delivery created before the cut-off is left to look at. */
  next: DeliveryAge | null;
}

/** The delivery log's retention step (inside a unit of work; the store port's retention aggregate). */
export interface DeliveryLogRetention {
  /**
   * Looks at the next `limit` deliveries created before `before`, oldest first, from `after` on
   * (the start when null), and deletes those finished (`succeeded` or `failed`) and unchanged since
   * `before`, with their attempts. Unfinished ones stay: they are still being delivered.
   */
  pruneDeliveries(before: number, limit: number, after: DeliveryAge | null): Promise<DeliveryPruneStep>;
}
