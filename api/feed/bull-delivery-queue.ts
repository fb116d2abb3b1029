/** The delivery queue port over BullMQ (the queue the dispatcher consumes). */
import { Queue } from "bullmq";
import type Redis from "ioredis";
import { type DeliveryJob, DeliveryJobSchema, deliveryJobId } from "../../common/delivery-job.ts";
import { DELIVERY_QUEUE, type RedisKeys } from "../../common/redis-keys.ts";
import type { DeliveryQueuePort } from "./delivery-queue-port.ts";

const KEEP = { removeOnComplete: { age: 24 * 3600, count: 100_000 }, removeOnFail: { age: 7 * 24 * 3600 } };

export function createBullDeliveryQueue(
  redis: Redis,
  keys: RedisKeys,
): DeliveryQueuePort & { close(): Promise<void> } {
  const queue = new Queue(DELIVERY_QUEUE, { connection: redis, prefix: keys.bullPrefix });
  // Connection trouble is reported by the shared connection's own handler; enqueue failures reach the caller.
  queue.on("error", () => undefined);

  const checked = (jobs: DeliveryJob[]) => jobs.map((job) => DeliveryJobSchema.parse(job));
  return {
    async enqueue(jobs) {
      await queue.addBulk(
        checked(jobs).map((job) => ({
          name: "deliver",
          data: job,
          opts: { jobId: deliveryJobId(job.webhookId, job.mutationId), ...KEEP },
        })),
      );
    },
    async requeue(jobs) {
      await queue.addBulk(
        checked(jobs).map((job) => ({
          name: "deliver",
          data: job,
          opts: { jobId: `${deliveryJobId(job.webhookId, job.mutationId)}.retry.${Date.now()}`, ...KEEP },
        })),
      );
    },
    close: () => queue.close(),
  };
}
