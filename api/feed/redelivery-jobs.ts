/** Delivery-log rows → the jobs that deliver them again (manual retry, recover). */
import type { DeliveryJob } from "../../common/delivery-job.ts";
import type { DeliveryRecord } from "../store/store.ts";

/** `requestId`: the retry's or recover's request, whose id the dispatcher's lines about these deliveries carry. */
export function redeliveryJobs(deliveries: readonly DeliveryRecord[], requestId?: string): DeliveryJob[] {
  return deliveries.map((delivery) => ({
    tenantId: delivery.tenantId,
    webhookId: delivery.webhookId,
    eventId: delivery.eventId,
    // Part 0 as jobs had it before parts existed: no field, so the job id is the same.
    ...(delivery.part === 0 ? {} : { part: delivery.part }),
    deliveryId: delivery.id,
    body: JSON.parse(delivery.body) as unknown[],
    committedAt: delivery.committedAt,
    ...(requestId ? { requestId } : {}),
  }));
}
