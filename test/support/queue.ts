/** Reads what the API put on the delivery queue (the run's real Redis, the test's prefix). */
import { Queue } from "bullmq";
import type { DeliveryJob } from "../../common/delivery-job.ts";
import { DELIVERY_QUEUE } from "../../common/redis-keys.ts";
import type { TestRedis } from "./redis.ts";

export async function queuedJobs(redis: TestRedis): Promise<{ id: string; data: DeliveryJob }[]> {
  const queue = new Queue(DELIVERY_QUEUE, { connection: redis.redis, prefix: redis.keys.bullPrefix });
  try {
    const jobs = await queue.getJobs(["waiting", "delayed", "active", "completed", "failed", "prioritized"]);
    return jobs
      .map((job) => ({ id: job.id as string, data: job.data as DeliveryJob }))
      .sort((a, b) => a.id.localeCompare(b.id));
  } finally {
    await queue.close();
  }
}
