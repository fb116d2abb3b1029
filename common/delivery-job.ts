/**
 * The delivery job: what the API's change feed enqueues and the dispatcher
 * consumes. Validated on both sides of the queue with the same schema.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { isSaneRequestId } from "./request-context.ts";

export const DeliveryJobSchema = z.object({
  /** Tenant owning the webhook; every job is scoped by it. */
  tenantId: z.string().min(1),
  webhookId: z.string().min(1),
  /** The committed mutation the elements come from. */
  mutationId: z.string().min(1),
  /** The delivery's id in the delivery log; sent as `service-request-id` and `webhook-id`, identical on every retry. */
  deliveryId: z.string().min(1),
  /**
   * Which of the mutation's deliveries to this webhook this is, from 0: one mutation's elements that
   * would make a body over the API's DELIVERY_MAX_BODY_BYTES go in several, in mutation order.
   * Absent: 0 (the only one, as before parts existed).
   */
  part: z.number().int().nonnegative().optional(),
  /** The JSON array POSTed to the receiver, one element per matching change, in mutation order. */
  body: z.array(z.unknown()).min(1),
  /** Commit time of the mutation, ms since the epoch (for latency figures). */
  committedAt: z.number().int().nonnegative(),
  /**
   * The id of the API request that caused this delivery (its mutation's, or the retry's or
   * recover's), for log correlation: the dispatcher's lines about the delivery carry it. Not the
   * `service-request-id` header, which is the delivery's id. Absent when no request caused it.
   */
  requestId: z.string().refine(isSaneRequestId, "not a request id").optional(),
});

export type DeliveryJob = z.infer<typeof DeliveryJobSchema>;

/**
 * Queue job id: one job per webhook × mutation × part, so a re-enqueue while the job is queued is
 * a no-op. Part 0 keeps the id jobs had before parts existed (`<webhook>.<mutation>`).
 */
export function deliveryJobId(webhookId: string, mutationId: string, part = 0): string {
  return part === 0 ? `${webhookId}.${mutationId}` : `${webhookId}.${mutationId}.${part}`;
}

/**
 * The delivery id of a webhook × mutation (× part, see `DeliveryJob.part`) committed at
 * `committedAt` (ms): derived, so a re-enqueue after a crash names the same delivery, and laid
 * out as a UUIDv7 — the commit's time first, then a hash — so the deliveries of one period sit
 * together in the store's indexes: logging them dirties a few pages, not one page per delivery.
 * Part 0 keeps the id deliveries had before parts existed.
 */
export function deliveryIdOf(webhookId: string, mutationId: string, committedAt: number, part = 0): string {
  const time = Math.max(0, Math.trunc(committedAt)).toString(16).padStart(12, "0").slice(-12);
  const named = part === 0 ? `${webhookId}/${mutationId}` : `${webhookId}/${mutationId}/${part}`;
  const hex = createHash("sha256").update(named).digest("hex");
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${hex.slice(13, 16)}-9${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
