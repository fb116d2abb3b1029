/**
 * The delivery queue as both processes see it: the API puts DeliveryJobs on
 * it (validated here, before they reach Redis), the dispatcher consumes them
 * (dispatcher/worker.ts). One job per delivery (webhook × event × part); the dispatcher owns
 * the retry policy, so jobs carry no BullMQ attempts or backoff options.
 */
import { Queue } from "bullmq";
import type Redis from "ioredis";
import { type DeliveryJob, DeliveryJobSchema, deliveryJobId } from "./delivery-job.ts";
import { DELIVERY_QUEUE, type RedisKeys } from "./redis-keys.ts";

export type DeliveryQueue = Queue<DeliveryJob>;

/** The BullMQ job name of every delivery. */
const DELIVERY_JOB_NAME = "deliver";

/**
 * Completed jobs go at once; failed ones are kept a day (at most 1,000; bodies
 * can be large) for inspection. The delivery log is the lasting record, and
 * it is what makes a re-enqueued job harmless: the dispatcher drops a job
 * whose delivery the log shows finished, without sending. Keeping completed
 * jobs too (an hour, 1,000 at most) cost Redis the trimming of that set at
 * every completion: under the load scenario, 0.29–0.31 ms of Redis CPU per
 * delivery against 0.25–0.27 without (bench/results/faults.md).
 */
const RETENTION = {
  removeOnComplete: true,
  removeOnFail: { age: 86_400, count: 1000 },
} as const;

const jobOptions = (jobId: string) => ({ jobId, ...RETENTION });

/** Thrown when a job does not satisfy DeliveryJobSchema; nothing of the batch was enqueued. */
export class InvalidDeliveryJobError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid delivery job: ${problems.join("; ")}`);
    this.name = "InvalidDeliveryJobError";
  }
}

/** The delivery queue on `redis` under the deployment's prefix. Close it with `queue.close()`. */
export function createDeliveryQueue(redis: Redis, keys: RedisKeys): DeliveryQueue {
  const queue = new Queue<DeliveryJob>(DELIVERY_QUEUE, { connection: redis, prefix: keys.bullPrefix });
  // Connection trouble is reported by the connection's own handler; enqueue failures reach the caller.
  queue.on("error", () => undefined);
  return queue;
}

function validated(jobs: readonly DeliveryJob[]): DeliveryJob[] {
  const problems: string[] = [];
  const parsed = jobs.map((job, index) => {
    const result = DeliveryJobSchema.safeParse(job);
    if (!result.success) {
      for (const issue of result.error.issues)
        problems.push(`jobs[${index}].${issue.path.join(".")}: ${issue.message}`);
    }
    return result.data as DeliveryJob;
  });
  if (problems.length > 0) throw new InvalidDeliveryJobError(problems);
  return parsed;
}

/**
 * Jobs enqueued one command each rather than in one MULTI. BullMQ's addBulk opens a MULTI, and
 * ioredis makes each MULTI copy every one of BullMQ's scripts onto it: ~70 µs of the API's CPU per
 * call here, more than the few commands it spares (at 1,000 mutations/s a batch holds a job or two).
 */
const ENQUEUED_ALONE = 4;

/**
 * Enqueues delivery jobs: a few one command each, more in one MULTI. Not all or nothing, and
 * need not be: enqueueing is idempotent per webhook × event × part, so a failed call is made again
 * whole. The job id is `deliveryJobId(webhookId, eventId, part)`, so a job already in the queue
 * (waiting, delayed, active, or failed and still retained) is left as it is; one that completed is
 * queued again, and the dispatcher drops it.
 * @throws InvalidDeliveryJobError when any job breaks the contract (none is enqueued).
 */
export async function enqueueDeliveries(queue: DeliveryQueue, jobs: readonly DeliveryJob[]): Promise<void> {
  const valid = validated(jobs);
  const entries = valid.map((job) => ({
    name: DELIVERY_JOB_NAME,
    data: job,
    opts: jobOptions(deliveryJobId(job.webhookId, job.eventId, job.part)),
  }));
  if (entries.length > ENQUEUED_ALONE) await queue.addBulk(entries);
  else await Promise.all(entries.map((entry) => queue.add(entry.name, entry.data, entry.opts)));
}

/** What `requeueDelivery` did. */
export type RequeueResult =
  /** A fresh job was added (none existed, or the earlier one had finished and was replaced). */
  | "queued"
  /** The job was waiting for a retry; it now runs at once. */
  | "promoted"
  /** The job is already waiting or being delivered; nothing to do. */
  | "already-queued";

/**
 * Queues one delivery again for a manual retry or a recover, even when its
 * earlier job finished (a finished job still holding the id is replaced, so
 * the id dedup does not swallow the retry). The new job gets a fresh retry
 * budget. The caller sets the delivery log row back to `pending` first:
 * the dispatcher drops jobs of deliveries the log shows finished.
 * @throws InvalidDeliveryJobError when the job breaks the contract.
 */
export async function requeueDelivery(queue: DeliveryQueue, job: DeliveryJob): Promise<RequeueResult> {
  const [valid] = validated([job]);
  if (!valid) throw new InvalidDeliveryJobError(["no job"]);
  const jobId = deliveryJobId(valid.webhookId, valid.eventId, valid.part);
  const existing = await queue.getJob(jobId);
  if (existing) {
    const state = await existing.getState();
    if (state === "delayed") {
      await existing.promote();
      return "promoted";
    }
    if (state !== "completed" && state !== "failed" && state !== "unknown") return "already-queued";
    await existing.remove();
  }
  await queue.add(DELIVERY_JOB_NAME, valid, jobOptions(jobId));
  return "queued";
}

/** `requeueDelivery` for each job, in order. */
export async function requeueDeliveries(
  queue: DeliveryQueue,
  jobs: readonly DeliveryJob[],
): Promise<RequeueResult[]> {
  validated(jobs);
  const results: RequeueResult[] = [];
  for (const job of jobs) results.push(await requeueDelivery(queue, job));
  return results;
}
