/**
 * The queue of webhook events that are not mutations (SPEC.md §11): schedule
 * ticks, made by BullMQ job schedulers (one per scheduled webhook, its id the
 * webhook's, so one tick however many processes run), and deferred firings,
 * delayed jobs keyed by webhook × record × due time. A worker of the API
 * process takes each event once and hands it to `handle`
 * (fire-webhook-event.ts), which logs and enqueues its delivery. Time is the
 * queue's: no process keeps a timer of its own.
 */
import { type Job, Queue, Worker } from "bullmq";
import type Redis from "ioredis";
import { z } from "zod";
import { describeError, type Logger } from "../../common/log.ts";
import { type RedisKeys, WEBHOOK_EVENT_QUEUE } from "../../common/redis-keys.ts";
import type { WebhookRecord } from "../store/store.ts";
import { delayUntil } from "./due-time.ts";

/** An event job: a schedule's tick (its time is the scheduler's) or a record's deferred firing. */
export const WebhookEventJobSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("tick"), tenantId: z.string().min(1), webhookId: z.string().min(1) }),
  z.object({
    kind: z.literal("deferred"),
    tenantId: z.string().min(1),
    webhookId: z.string().min(1),
    recordUid: z.string().min(1),
    dueAt: z.number().int(),
  }),
]);
export type WebhookEventJob = z.infer<typeof WebhookEventJobSchema>;

/** An event as handled: a tick carries the scheduled time it is for. */
export type WebhookEvent =
  | { kind: "tick"; tenantId: string; webhookId: string; at: number }
  | Extract<WebhookEventJob, { kind: "deferred" }>;

/** The schedules of scheduled webhooks, kept in step with their definitions by the webhook service. */
export interface WebhookSchedules {
  /** Upserts the webhook's scheduler when it is an enabled scheduled one; removes it otherwise. */
  sync(webhook: WebhookRecord): Promise<void>;
  /** Removes the webhook's scheduler (none is no error). */
  remove(webhookId: string): Promise<void>;
}

/** A deferred record's firing: one job per webhook × record × due time. */
export interface DeferredFiring {
  tenantId: string;
  webhookId: string;
  recordUid: string;
  dueAt: number;
}

/** Deferred firings as the change feed schedules and cancels them. */
export interface DeferredFirings {
  /** Schedules firings (idempotent per webhook × record × due time; a past due time fires at once). */
  schedule(firings: readonly DeferredFiring[]): Promise<void>;
  /** Cancels firings not yet fired (a firing already taken is no error). */
  cancel(firings: readonly DeferredFiring[]): Promise<void>;
}

/** The job id of a firing. Deterministic, so the feed re-scheduling it after a crash adds nothing. */
const firingJobId = (f: DeferredFiring): string => `deferred.${f.webhookId}.${f.recordUid}.${f.dueAt}`;

/**
 * Kept a day after they ran, so a feed re-reading its batch after a crash finds the job and adds
 * no second firing (the delivery's own id would drop the duplicate anyway). An event whose
 * handling failed (the store or Redis away) is tried again, 5 times in all, backing off from 1 s.
 */
const KEEP = {
  removeOnComplete: { age: 86_400, count: 10_000 },
  removeOnFail: { age: 86_400, count: 1000 },
  attempts: 5,
  backoff: { type: "exponential", delay: 1000 },
};

export function createWebhookEventQueue(redis: Redis, keys: RedisKeys, now: () => number = Date.now) {
  // Made on first use: a process (or test) that never schedules anything opens nothing on Redis for it.
  let made: Queue<WebhookEventJob> | null = null;
  const open = (): Queue<WebhookEventJob> => {
    if (!made) {
      made = new Queue<WebhookEventJob>(WEBHOOK_EVENT_QUEUE, { connection: redis, prefix: keys.bullPrefix });
      // Connection trouble is reported by the connection's own handler; failures reach the caller.
      made.on("error", () => undefined);
    }
    return made;
  };

  const schedules: WebhookSchedules = {
    async sync(webhook) {
      if (
        webhook.type !== "scheduled" ||
        !webhook.enabled ||
        !webhook.options ||
        !("cron" in webhook.options)
      ) {
        await open().removeJobScheduler(webhook.id);
        return;
      }
      await open().upsertJobScheduler(
        webhook.id,
        { pattern: webhook.options.cron, tz: "UTC" },
        {
          name: "tick",
          data: { kind: "tick", tenantId: webhook.tenantId, webhookId: webhook.id },
          opts: KEEP,
        },
      );
    },
    async remove(webhookId) {
      await open().removeJobScheduler(webhookId);
    },
  };

  const firings: DeferredFirings = {
    async schedule(list) {
      if (list.length === 0) return;
      const at = now();
      await open().addBulk(
        list.map((f) => ({
          name: "deferred",
          data: { kind: "deferred" as const, ...f },
          opts: { jobId: firingJobId(f), delay: delayUntil(f.dueAt, at), ...KEEP },
        })),
      );
    },
    async cancel(list) {
      for (const f of list) {
        const job = await open().getJob(firingJobId(f));
        // Only a firing still waiting: one running or done is left as it is.
        if (job && (await job.getState()) === "delayed") await job.remove().catch(() => undefined);
      }
    },
  };

  return { schedules, firings, close: async () => made?.close() };
}

/**
 * How soon an event taken by a process that then died is taken again. BullMQ's defaults (a 30 s
 * lock, stalled jobs looked for every 30 s) would fire such a record up to a minute late; an event
 * is handled in milliseconds, so a 5 s lock (renewed every 2.5 s while it runs) is ample, and
 * stalled jobs are looked for every 2 s (one Redis script a process). Handling is idempotent (the
 * delivery's id), so a job taken again after a long pause does nothing twice; it may stall a few
 * times (an event loop busy for seconds) before BullMQ gives it up.
 */
const STALLED = { lockDuration: 5000, stalledInterval: 2000, maxStalledCount: 5 };

export interface WebhookEventWorkerDeps {
  redis: Redis;
  keys: RedisKeys;
  handle: (event: WebhookEvent) => Promise<void>;
  log: Logger;
  concurrency?: number;
}

/**
 * The worker taking events off the queue, one at a time per job whatever the number of processes
 * (BullMQ's lock). A job that throws is retried by BullMQ (5 tries, backing off from 1 s): its
 * delivery is logged and enqueued idempotently, so a retry adds nothing twice.
 */
export function createWebhookEventWorker({
  redis,
  keys,
  handle,
  log,
  concurrency = 4,
}: WebhookEventWorkerDeps) {
  let worker: Worker<WebhookEventJob> | null = null;
  const run = async (job: Job<WebhookEventJob>) => {
    const parsed = WebhookEventJobSchema.safeParse(job.data);
    if (!parsed.success) {
      log.error("webhook event job breaks the contract; dropped", { jobId: job.id });
      return;
    }
    const data = parsed.data;
    // A scheduler's job carries the time it was scheduled for: the tick's identity.
    const event: WebhookEvent =
      data.kind === "tick"
        ? { ...data, at: job.opts.prevMillis ?? job.timestamp + (job.opts.delay ?? 0) }
        : data;
    await handle(event);
  };
  return {
    /** Starts taking events (the worker and its connections are made here, not before). */
    start(): void {
      if (worker) return;
      worker = new Worker<WebhookEventJob>(WEBHOOK_EVENT_QUEUE, run, {
        connection: redis,
        prefix: keys.bullPrefix,
        concurrency,
        ...STALLED,
      });
      worker.on("failed", (job, error) =>
        log.warn("webhook event failed; retried", { jobId: job?.id, ...describeError(error) }),
      );
      // Connection trouble is reported by the shared connection's own handler.
      worker.on("error", () => undefined);
    },
    async stop(): Promise<void> {
      await worker?.close();
      worker = null;
    },
  };
}
