/** What the API needs of the delivery queue: put jobs on it, and put finished ones back for a retry. */
import type { DeliveryJob } from "../../common/delivery-job.ts";

export interface DeliveryQueuePort {
  /** Idempotent per delivery (webhook × event × part): a job enqueued twice is delivered once. */
  enqueue(jobs: DeliveryJob[]): Promise<void>;
  /** Queues deliveries again even if their earlier job finished (manual retry, recover). */
  requeue(jobs: DeliveryJob[]): Promise<void>;
}
