/** The delivery queue port over the shared BullMQ queue contract (common/delivery-queue.ts). */
import type Redis from "ioredis";
import { createDeliveryQueue, enqueueDeliveries, requeueDeliveries } from "../../common/delivery-queue.ts";
import type { RedisKeys } from "../../common/redis-keys.ts";
import type { DeliveryQueuePort } from "./delivery-queue-port.ts";

export function createBullDeliveryQueue(
  redis: Redis,
  keys: RedisKeys,
): DeliveryQueuePort & { close(): Promise<void> } {
  const queue = createDeliveryQueue(redis, keys);
  // Connection trouble is reported by the shared connection's own handler; enqueue failures reach the caller.
  queue.on("error", () => undefined);
  return {
    enqueue: (jobs) => enqueueDeliveries(queue, jobs),
    requeue: async (jobs) => {
      await requeueDeliveries(queue, jobs);
    },
    close: () => queue.close(),
  };
}
