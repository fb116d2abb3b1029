/**
 * The delivery job: what the API's change feed enqueues and the dispatcher
 * consumes. Validated on both sides of the queue with the same schema.
 */
import { z } from "zod";

export const DeliveryJobSchema = z.object({
  /** Tenant owning the webhook; every job is scoped by it. */
  tenantId: z.string().min(1),
  webhookId: z.string().min(1),
  /** The committed mutation the elements come from. */
  mutationId: z.string().min(1),
  /** Stable across retries of this delivery; sent as `service-request-id`. */
  requestId: z.string().min(1),
  /** The JSON array POSTed to the receiver, one element per matching change. */
  body: z.array(z.unknown()).min(1),
  /** Commit time of the mutation, ms since the epoch (for latency figures). */
  committedAt: z.number().int().nonnegative(),
});

export type DeliveryJob = z.infer<typeof DeliveryJobSchema>;

/** Queue job id: one job per webhook per mutation, so a re-enqueue is a no-op. */
export function deliveryJobId(webhookId: string, mutationId: string): string {
  return `${webhookId}.${mutationId}`;
}
