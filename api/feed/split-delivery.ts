/**
 * One mutation's delivery job for one webhook → the deliveries that carry it:
 * each body at most `maxBodyBytes` of JSON, each element whole, in mutation
 * order; one delivery, the job as it came, when the whole body fits. Each part
 * is a delivery of its own (its own id, so its own `service-request-id`),
 * derived from webhook × mutation × part, so re-reading the mutation after a
 * crash plans the same deliveries and the queue's id dedup still holds. Pure.
 */
import { type DeliveryJob, deliveryIdOf } from "../../common/delivery-job.ts";

/** A delivery ready to log and enqueue. */
export interface PlannedDelivery {
  job: DeliveryJob;
  /** The body as sent, `JSON.stringify(job.body)`: measured here, logged as is. */
  bodyText: string;
  /** Its size in UTF-8 bytes. Over the limit only for a part holding one element larger on its own. */
  bytes: number;
}

/** Elements grouped into one part, with their JSON texts. */
interface Part {
  elements: unknown[];
  texts: string[];
  bytes: number;
}

/**
 * Splits `job`'s body into parts of at most `maxBodyBytes` (UTF-8 bytes of the JSON array),
 * filling each part in mutation order before starting the next. An element larger than the limit
 * on its own cannot be split: it goes in a part alone (the caller logs it).
 */
export function splitDelivery(job: DeliveryJob, maxBodyBytes: number): PlannedDelivery[] {
  const whole = JSON.stringify(job.body);
  const wholeBytes = Buffer.byteLength(whole);
  // A tick's `{}` has no elements to split.
  if (wholeBytes <= maxBodyBytes || !Array.isArray(job.body))
    return [{ job, bodyText: whole, bytes: wholeBytes }];
  const parts: Part[] = [];
  let current: Part | undefined;
  for (const element of job.body) {
    // As JSON.stringify writes an array's element (undefined becomes null).
    const text = JSON.stringify(element) ?? "null";
    const bytes = Buffer.byteLength(text);
    // A part is `[` + its elements joined by `,` + `]`.
    if (current && current.bytes + 1 + bytes <= maxBodyBytes) {
      current.elements.push(element);
      current.texts.push(text);
      current.bytes += 1 + bytes;
    } else {
      current = { elements: [element], texts: [text], bytes: 2 + bytes };
      parts.push(current);
    }
  }
  return parts.map((p, part) => ({
    job: {
      ...job,
      part,
      deliveryId: deliveryIdOf(job.webhookId, job.eventId, job.committedAt, part),
      body: p.elements,
    },
    bodyText: `[${p.texts.join(",")}]`,
    bytes: p.bytes,
  }));
}
