/**
 * The dispatcher's writes to the delivery log on MongoDB, decided: what a
 * transaction read (the delivery's status and count, the webhook's version)
 * and the attempt in, the answer and the writes out (log-operations.ts), in
 * the order they are sent. Pure; mongodb-delivery-store.ts reads, calls these
 * and sends the writes in the same transaction.
 *
 * An attempt's number is the delivery's count as read, plus one, set on the
 * delivery's document: two transactions numbering attempts of one delivery
 * both write that document, so the second meets a write conflict and runs
 * again from a snapshot that holds the first (snapshot isolation: no number
 * is handed out twice, and none is skipped).
 */
import {
  type AttemptRecord,
  type DeliveryStatus,
  IN_FLIGHT_ERROR,
  OUTCOME_UNKNOWN_ERROR,
  type SentRequest,
} from "../delivery-log.ts";
import type { AttemptStart, AttemptToStart } from "../delivery-store.ts";
import { attemptDocumentOf, attemptId, attemptRange, type DeliveryDocument } from "./delivery-documents.ts";
import { deliveryFilter } from "./delivery-log-plans.ts";
import type { LogWrite } from "./log-operations.ts";

/** What starting or recording an attempt reads of its delivery. */
export type CountedDelivery = Pick<DeliveryDocument, "status" | "attempts">;

/** The fields of a delivery its attempts read (a projection). */
export const COUNTED_FIELDS = { status: 1, attempts: 1 } as const;

/** The attempts of a delivery still in flight, closed as unknown: a dispatcher that stopped left them. */
function closeUnknown(tenantId: string, deliveryId: string): LogWrite {
  return {
    kind: "update",
    collection: "attempts",
    filter: { t: tenantId, _id: attemptRange(deliveryId), inFlight: true },
    update: { $set: { inFlight: false, error: OUTCOME_UNKNOWN_ERROR } },
    many: true,
  };
}

/** Attempt `number` counted on the delivery and logged, the earlier ones left in flight closed first. */
function logAttempt(
  tenantId: string,
  deliveryId: string,
  number: number,
  deliverySet: Partial<DeliveryDocument>,
  attempt: AttemptRecord,
  inFlight: boolean,
  request: SentRequest | null,
): LogWrite[] {
  const writes: LogWrite[] = [
    {
      kind: "update",
      collection: "deliveries",
      filter: deliveryFilter(tenantId, deliveryId),
      update: { $set: { attempts: number, ...deliverySet } },
      many: false,
    },
  ];
  // The first attempt has none before it: the common case skips the write.
  if (number > 1) writes.push(closeUnknown(tenantId, deliveryId));
  const document = attemptDocumentOf(tenantId, deliveryId, {
    ...attempt,
    attempt: number,
    inFlight,
    request,
  });
  writes.push({ kind: "insert", collection: "attempts", documents: [document] });
  return writes;
}

/**
 * Starting `attempt`: logged in flight as the next attempt, its delivery `delivering`, when the
 * delivery is unfinished and the webhook at the version the request was built from; else nothing is
 * written and the answer says why (a missing delivery is `unlogged` only while the webhook is at
 * that version). `webhookVersion` is the webhook's current version, null when it was deleted.
 */
export function planStart(
  attempt: AttemptToStart,
  delivery: CountedDelivery | null,
  webhookVersion: number | null,
): { start: AttemptStart; writes: LogWrite[] } {
  const changed = webhookVersion !== attempt.webhookVersion;
  if (delivery === null) return { start: { kind: changed ? "webhook-changed" : "unlogged" }, writes: [] };
  const { status } = delivery;
  if (status === "succeeded" || status === "failed")
    return { start: { kind: "finished", status }, writes: [] };
  if (changed) return { start: { kind: "webhook-changed" }, writes: [] };
  const number = delivery.attempts + 1;
  const inFlight: AttemptRecord = {
    startedAt: attempt.startedAt,
    durationMs: 0,
    statusCode: null,
    responseBody: null,
    error: IN_FLIGHT_ERROR,
  };
  const writes = logAttempt(
    attempt.tenantId,
    attempt.deliveryId,
    number,
    { status: "delivering", updatedAt: attempt.startedAt },
    inFlight,
    true,
    attempt.request,
  );
  return { start: { kind: "started", number }, writes };
}

/** The outcome of started attempt `number` filled in (no longer in flight), and the delivery's status set. */
export function planFinish(
  tenantId: string,
  deliveryId: string,
  number: number,
  attempt: AttemptRecord,
  status: Exclude<DeliveryStatus, "delivering">,
): LogWrite[] {
  const { startedAt, durationMs, statusCode, responseBody, error } = attempt;
  return [
    {
      kind: "update",
      collection: "deliveries",
      filter: deliveryFilter(tenantId, deliveryId),
      update: { $set: { status, updatedAt: startedAt + durationMs } },
      many: false,
    },
    {
      kind: "update",
      collection: "attempts",
      filter: { _id: attemptId(deliveryId, number), t: tenantId },
      update: { $set: { startedAt, durationMs, statusCode, responseBody, error, inFlight: false } },
      many: false,
    },
  ];
}

/**
 * A finished attempt that sent nothing, appended as the next attempt, and the delivery's status
 * set; attempts left in flight closed first. Null, and nothing written, for a delivery not logged.
 */
export function planRecord(
  tenantId: string,
  deliveryId: string,
  delivery: CountedDelivery | null,
  attempt: AttemptRecord,
  status: Exclude<DeliveryStatus, "delivering">,
): { number: number | null; writes: LogWrite[] } {
  if (delivery === null) return { number: null, writes: [] };
  const number = delivery.attempts + 1;
  const at = attempt.startedAt + attempt.durationMs;
  const writes = logAttempt(tenantId, deliveryId, number, { status, updatedAt: at }, attempt, false, null);
  return { number, writes };
}
