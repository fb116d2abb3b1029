/**
 * The delivery log's documents on MongoDB (common/store/mongodb/layout.ts,
 * `deliveries` and `delivery_attempts`) and their records: a record in, a
 * document out, and back, one mapping for the API's members and the
 * dispatcher's. Pure: no driver call.
 *
 * A delivery's `_id` is its id; an attempt's is `{d: delivery id, n: number}`,
 * so a delivery's attempts are one range of the `_id` index (attemptsOf) and
 * come back in attempt order without an index of their own. The request an
 * attempt sent is kept as JSON text, as the SQL engines keep it: its header
 * names may hold `.` or `$`, which a field name had better not.
 */
import type { Document } from "mongodb";
import type {
  DeliveryAttempt,
  DeliveryRecord,
  DeliveryStatus,
  ExportedAttempt,
  SentRequest,
} from "../delivery-log.ts";

/** A delivery as stored (layout.ts, deliveries). */
export interface DeliveryDocument {
  _id: string;
  t: string;
  webhookId: string;
  eventId: string;
  part: number;
  status: DeliveryStatus;
  body: string;
  test: boolean;
  attempts: number;
  committedAt: number;
  createdAt: number;
  updatedAt: number;
}

/** An attempt's key: its delivery and its number, in this field order (the `_id` index compares them so). */
export interface AttemptId {
  d: string;
  n: number;
}

/** An attempt as stored (layout.ts, delivery_attempts). */
export interface AttemptDocument {
  _id: AttemptId;
  t: string;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
  /** Logged before its request left, its outcome not recorded yet (DeliveryStore.startAttempt). */
  inFlight: boolean;
  /** The SentRequest as JSON text; null when none was sent or kept. */
  request: string | null;
}

/** The key of attempt `n` of delivery `deliveryId`, its fields in the order the index compares them. */
export const attemptId = (deliveryId: string, n: number): AttemptId => ({ d: deliveryId, n });

/**
 * The `_id` condition of a delivery's attempts: the range of the `_id` index from its attempt 0 to
 * the highest number a document can hold (an embedded document compares field by field, `d`
 * first), so the read is an index scan, not a search of the collection on `_id.d`.
 */
export const attemptRange = (deliveryId: string): Document => ({
  $gte: attemptId(deliveryId, 0),
  $lte: attemptId(deliveryId, Number.MAX_SAFE_INTEGER),
});

/** The filter of the tenant's attempts of these deliveries (at least one: `$or` needs a branch). */
export function attemptsOf(tenantId: string, deliveryIds: readonly string[]): Document {
  return { t: tenantId, $or: deliveryIds.map((id) => ({ _id: attemptRange(id) })) };
}

/** The document of a delivery record. */
export function deliveryDocumentOf(record: DeliveryRecord): DeliveryDocument {
  return {
    _id: record.id,
    t: record.tenantId,
    webhookId: record.webhookId,
    eventId: record.eventId,
    part: record.part,
    status: record.status,
    body: record.body,
    test: record.test,
    attempts: record.attempts,
    committedAt: record.committedAt,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

/** The record of a stored delivery. */
export function deliveryOf(document: DeliveryDocument): DeliveryRecord {
  return {
    tenantId: document.t,
    id: document._id,
    webhookId: document.webhookId,
    eventId: document.eventId,
    part: document.part,
    status: document.status,
    body: document.body,
    test: document.test,
    attempts: document.attempts,
    committedAt: document.committedAt,
    createdAt: document.createdAt,
    updatedAt: document.updatedAt,
  };
}

/** The document of attempt `attempt` of a tenant's delivery, as logged or as copied. */
export function attemptDocumentOf(
  tenantId: string,
  deliveryId: string,
  attempt: ExportedAttempt,
): AttemptDocument {
  return {
    _id: attemptId(deliveryId, attempt.attempt),
    t: tenantId,
    startedAt: attempt.startedAt,
    durationMs: attempt.durationMs,
    statusCode: attempt.statusCode,
    responseBody: attempt.responseBody,
    error: attempt.error,
    inFlight: attempt.inFlight,
    request: attempt.request === null ? null : JSON.stringify(attempt.request),
  };
}

/** The attempt a stored document holds, as the API reads it. */
export function attemptOf(document: AttemptDocument): DeliveryAttempt {
  return {
    attempt: document._id.n,
    startedAt: document.startedAt,
    durationMs: document.durationMs,
    statusCode: document.statusCode,
    responseBody: document.responseBody,
    error: document.error,
    request: document.request === null ? null : (JSON.parse(document.request) as SentRequest),
  };
}

/** The attempt a stored document holds, as copied between stores (with its in-flight mark). */
export function exportedAttemptOf(document: AttemptDocument): ExportedAttempt {
  return { ...attemptOf(document), inFlight: document.inFlight };
}

/** Attempt documents grouped by delivery id, each group in the order given. */
export function attemptsByDelivery<T>(
  documents: readonly AttemptDocument[],
  map: (document: AttemptDocument) => T,
): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const document of documents) {
    const list = groups.get(document._id.d);
    if (list) list.push(map(document));
    else groups.set(document._id.d, [map(document)]);
  }
  return groups;
}
