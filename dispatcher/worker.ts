/**
 * Consumes the delivery queue: each job is validated against the shared
 * DeliveryJob schema, handed to `deliver`, and its DeliveryDecision turned
 * into what BullMQ should do — complete, retry after a delay (spending an
 * attempt), fail for good, or wait without spending one (endpoint busy,
 * handed back at shutdown). A job that fails validation can never succeed,
 * so it fails at once instead of being retried.
 */
import { DelayedError, type Job, UnrecoverableError, Worker } from "bullmq";
import type Redis from "ioredis";
import { type DeliveryJob, DeliveryJobSchema } from "../common/delivery-job.ts";
import { DELIVERY_BACKOFF } from "../common/delivery-queue.ts";
import { describeError, type Logger } from "../common/log.ts";
import { DELIVERY_QUEUE, type RedisKeys } from "../common/redis-keys.ts";
import { type RetryPolicy, scheduledDelay } from "./decide-outcome.ts";
import type { Deliver, DeliveryDecision } from "./deliver.ts";

export interface DispatcherDeps {
  redis: Redis;
  keys: RedisKeys;
  log: Logger;
  /** Deliveries in flight at once in this process. */
  concurrency: number;
  /** Performs one attempt of a delivery and says what should follow. Throwing is an internal error: retried by `retry`. */
  deliver: Deliver;
  /** Waits between attempts after internal errors (decisions carry their own waits). */
  retry: RetryPolicy;
  /** How long a job stays locked to a dispatcher that stopped answering (killed) before another takes it over. Default 30000. */
  lockDurationMs?: number;
}

export interface Dispatcher {
  /** Resolves once the worker is connected and taking jobs. */
  ready(): Promise<void>;
  /**
   * Stops taking jobs and waits for in-flight ones, at most `graceMs`; then
   * interrupts them and hands them back to the queue (they are retried later,
   * without spending an attempt).
   */
  stop(graceMs: number): Promise<void>;
}

/** A retry decided by the retry policy, carrying its wait for the backoff strategy. */
class RetryDeliveryError extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
    this.name = "RetryDeliveryError";
  }
}

// A killed dispatcher's job stalls once; a job stalling this often is crashing dispatchers and is failed.
const MAX_STALLED = 10;
// After the grace period, how long interrupted deliveries get to record themselves and go back.
const HAND_BACK_MS = 5000;

const settlesWithin = (promise: Promise<unknown>, ms: number) =>
  Promise.race([
    promise.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref()),
  ]);

/** Creates and starts the worker. */
export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { redis, keys, log, concurrency, deliver, retry } = deps;

  /** Carries out a decision; throws what tells BullMQ the job's next state. */
  async function apply(decision: DeliveryDecision, job: Job<unknown>, token: string | undefined) {
    switch (decision.kind) {
      case "succeeded":
      case "skipped":
        return decision.kind;
      case "retry":
        throw new RetryDeliveryError(decision.reason, decision.delayMs);
      case "failed":
        throw new UnrecoverableError(decision.reason);
      case "busy":
      case "handed-back":
        // moveToDelayed does not count an attempt; DelayedError tells the worker the job has moved.
        await job.moveToDelayed(Date.now() + (decision.kind === "busy" ? decision.delayMs : 0), token);
        throw new DelayedError();
    }
  }

  const worker = new Worker(
    DELIVERY_QUEUE,
    async (job: Job<unknown>, token?: string, signal?: AbortSignal) => {
      const parsed = DeliveryJobSchema.safeParse(job.data);
      if (!parsed.success) {
        log.error("invalid delivery job dropped", { jobId: job.id, problems: parsed.error.issues.length });
        throw new UnrecoverableError("invalid delivery job");
      }
      const data: DeliveryJob = parsed.data;
      if (signal?.aborted) return apply({ kind: "handed-back" }, job, token);
      return apply(await deliver(data, { attempt: job.attemptsMade + 1, signal }), job, token);
    },
    {
      connection: redis,
      prefix: keys.bullPrefix,
      concurrency,
      autorun: true,
      lockDuration: deps.lockDurationMs ?? 30_000,
      stalledInterval: deps.lockDurationMs ?? 30_000,
      maxStalledCount: MAX_STALLED,
      settings: {
        backoffStrategy: (attemptsMade, type, error) => {
          if (error instanceof RetryDeliveryError) return error.delayMs;
          if (type !== DELIVERY_BACKOFF) return -1;
          return scheduledDelay(retry, attemptsMade, Math.random()) ?? -1;
        },
      },
    },
  );
  worker.on("error", (error) => log.warn("delivery worker error", describeError(error)));
  // Emitted for every failed attempt, retried or not; decisions are logged by `deliver`, internal errors here.
  worker.on("failed", (job, error) => {
    if (error instanceof RetryDeliveryError || error instanceof UnrecoverableError) return;
    log.error("internal error in a delivery", {
      jobId: job?.id,
      attemptsMade: job?.attemptsMade,
      ...describeError(error),
    });
  });

  return {
    ready: () => worker.waitUntilReady().then(() => undefined),
    async stop(graceMs) {
      const closing = worker.close();
      if (await settlesWithin(closing, graceMs)) return;
      log.warn("shutdown grace period over; handing in-flight deliveries back");
      worker.cancelAllJobs("dispatcher shutting down");
      if (!(await settlesWithin(closing, HAND_BACK_MS))) {
        log.error(
          "in-flight deliveries did not stop; another dispatcher takes them over when their locks expire",
        );
      }
    },
  };
}
