/**
 * The delivery job: what the API's change feed enqueues and the dispatcher
 * consumes. Validated on both sides of the queue with the same schema.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { isSaneRequestId } from "./request-context.ts";

const DeliveryJobShape = z.object({
  /** Tenant owning the webhook; every job is scoped by it. */
  tenantId: z.string().min(1),
  webhookId: z.string().min(1),
  /**
   * The event the delivery reports (see `eventIdOf`): the committed mutation's id, a deferred
   * firing `deferred:<recordUid>:<dueMs>` or a schedule tick `tick:<ms>`. With the webhook it
   * names the delivery, so retries, the log and idempotent enqueue work alike for every kind.
   */
  eventId: z.string().min(1).max(512),
  /** The delivery's id in the delivery log; sent as `service-request-id` and `webhook-id`, identical on every retry. */
  deliveryId: z.string().min(1),
  /**
   * Which of the mutation's deliveries to this webhook this is, from 0: one mutation's elements that
   * would make a body over the API's DELIVERY_MAX_BODY_BYTES go in several, in mutation order.
   * Absent: 0 (the only one, as before parts existed).
   */
  part: z.number().int().nonnegative().optional(),
  /**
   * What is POSTed: a JSON array of elements (a mutation's changes in mutation order, a deferred
   * firing's record), or `{}` for a schedule tick.
   */
  body: z.union([z.array(z.unknown()).min(1), z.strictObject({})]),
  /** Commit time of the mutation, ms since the epoch (for latency figures). */
  committedAt: z.number().int().nonnegative(),
  /**
   * The id of the API request that caused this delivery (its mutation's, or the retry's or
   * recover's), for log correlation: the dispatcher's lines about the delivery carry it. Not the
   * `service-request-id` header, which is the delivery's id. Absent when no request caused it.
   */
  requestId: z.string().refine(isSaneRequestId, "not a request id").optional(),
});

/**
 * Jobs queued before deliveries had event ids name their mutation `mutationId`; one still in Redis
 * across an upgrade is read with it as its event id.
 */
const withEventId = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null || "eventId" in value || !("mutationId" in value))
    return value;
  const { mutationId, ...rest } = value as Record<string, unknown>;
  return { ...rest, eventId: mutationId };
};

export const DeliveryJobSchema = z.preprocess(withEventId, DeliveryJobShape);

export type DeliveryJob = z.infer<typeof DeliveryJobShape>;

/**
 * What a delivery reports: a committed mutation, a deferred record's firing at a due time, a schedule
 * tick, or a test event (POST /webhooks/{id}/test), which is none of these.
 */
export type DeliveryEvent =
  | { kind: "mutation"; mutationId: string }
  | { kind: "deferred"; recordUid: string; dueAt: number }
  | { kind: "tick"; at: number }
  | { kind: "test"; id: string };

/**
 * The event id of `event`: a mutation's own id (as deliveries had it before other kinds existed),
 * `deferred:<recordUid>:<dueMs>`, `tick:<ms>`, `test:<id>`. Pure.
 */
export function eventIdOf(event: DeliveryEvent): string {
  switch (event.kind) {
    case "mutation":
      return event.mutationId;
    case "deferred":
      return `deferred:${event.recordUid}:${Math.trunc(event.dueAt)}`;
    case "tick":
      return `tick:${Math.trunc(event.at)}`;
    case "test":
      return `test:${event.id}`;
  }
}

/**
 * Queue job id: one job per webhook × event × part, so a re-enqueue while the job is queued is
 * a no-op. Part 0 keeps the id jobs had before parts existed (`<webhook>.<mutation>`). BullMQ
 * refuses custom ids holding `:` (its own scheduler's ids use it), so an event id's `:` is
 * written `~`, which no event id holds (mutation ids and record UIDs are UUIDs).
 */
export function deliveryJobId(webhookId: string, eventId: string, part = 0): string {
  const event = eventId.replaceAll(":", "~");
  return part === 0 ? `${webhookId}.${event}` : `${webhookId}.${event}.${part}`;
}

/**
 * The delivery id of a webhook × event (× part, see `DeliveryJob.part`) that happened at
 * `committedAt` (ms: the mutation's commit, the due time, the tick): derived, so a re-enqueue after a crash names the same delivery, and laid
 * out as a UUIDv7 — the commit's time first, then a hash — so the deliveries of one period sit
 * together in the store's indexes: logging them dirties a few pages, not one page per delivery.
 * Part 0 keeps the id deliveries had before parts existed.
 */
export function deliveryIdOf(webhookId: string, eventId: string, committedAt: number, part = 0): string {
  const time = Math.max(0, Math.trunc(committedAt)).toString(16).padStart(12, "0").slice(-12);
  const named = part === 0 ? `${webhookId}/${eventId}` : `${webhookId}/${eventId}/${part}`;
  const hex = createHash("sha256").update(named).digest("hex");
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${hex.slice(13, 16)}-9${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
