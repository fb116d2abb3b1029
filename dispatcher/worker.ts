/**
 * Consumes the delivery queue: each job is validated against the shared
 * DeliveryJob schema and handed to `deliver`. A job that fails validation can
 * never succeed, so it fails at once instead of being retried.
 */
import { UnrecoverableError, Worker } from "bullmq";
import type Redis from "ioredis";
import { type DeliveryJob, DeliveryJobSchema } from "../common/delivery-job.ts";
import { describeError, type Logger } from "../common/log.ts";
import { DELIVERY_QUEUE, type RedisKeys } from "../common/redis-keys.ts";

export interface DispatcherDeps {
  redis: Redis;
  keys: RedisKeys;
  log: Logger;
  concurrency: number;
  /** Performs one delivery; throwing asks the queue to retry it. */
  deliver: (job: DeliveryJob) => Promise<void>;
}

export interface Dispatcher {
  /** Resolves once the worker is connected and taking jobs. */
  ready(): Promise<void>;
  /** Stops taking jobs and waits for in-flight ones, at most `graceMs`; unfinished ones go back to the queue. */
  stop(graceMs: number): Promise<void>;
}

export function createDispatcher({ redis, keys, log, concurrency, deliver }: DispatcherDeps): Dispatcher {
  const worker = new Worker(
    DELIVERY_QUEUE,
    async (job) => {
      const parsed = DeliveryJobSchema.safeParse(job.data);
      if (!parsed.success) {
        log.error("invalid delivery job dropped", { jobId: job.id, problems: parsed.error.issues.length });
        throw new UnrecoverableError("invalid delivery job");
      }
      await deliver(parsed.data);
    },
    { connection: redis, prefix: keys.bullPrefix, concurrency, autorun: true },
  );
  worker.on("error", (error) => log.warn("delivery worker error", describeError(error)));

  return {
    ready: () => worker.waitUntilReady().then(() => undefined),
    async stop(graceMs) {
      const closing = worker.close();
      const timedOut = await Promise.race([
        closing.then(() => false),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(true), graceMs)),
      ]);
      // Past the grace period, force: in-flight jobs stay locked and BullMQ hands them back once the lock expires.
      if (timedOut) await worker.close(true);
    },
  };
}
