/**
 * Consumes the delivery queue: each job is validated against the shared
 * DeliveryJob schema, handed to `deliver`, and its DeliveryDecision turned
 * into what BullMQ should do — complete, fail for good, or wait in the
 * delayed set (a retry, which spends an attempt; a busy endpoint or a
 * hand-back at shutdown, which do not). The dispatcher owns the retry
 * policy: attempts are counted in the job's progress and retries are delays
 * it sets itself, so a job behaves the same whatever BullMQ options it was
 * enqueued with. A job that fails validation can never succeed, so it fails
 * at once. An attempt waiting on a slow endpoint hands its worker's slot to a
 * spare worker until its answer is in (spare-fetchers.ts).
 */
import { DelayedError, type Job, UnrecoverableError, Worker } from "bullmq";
import type Redis from "ioredis";
import { setNewest } from "../common/bounded-map.ts";
import { type DeliveryJob, DeliveryJobSchema } from "../common/delivery-job.ts";
import { describeError, type Logger } from "../common/log.ts";
import { DELIVERY_QUEUE, type RedisKeys } from "../common/redis-keys.ts";
import { runInRequestContext, runOutsideRequestContext } from "../common/request-context.ts";
import { type RetryPolicy, scheduledDelay } from "./decide-outcome.ts";
import type { Deliver, DeliveryDecision } from "./deliver.ts";
import { type DeliveryMetrics, NO_DELIVERY_METRICS } from "./delivery-metrics.ts";
import { createSpareFetchers, type Fetcher } from "./spare-fetchers.ts";

export interface DispatcherDeps {
  redis: Redis;
  keys: RedisKeys;
  log: Logger;
  /** Deliveries in flight at once in this process. */
  concurrency: number;
  /** Performs one attempt of a delivery and says what should follow. Throwing is an internal error, retried by `retry`. */
  deliver: Deliver;
  /** Waits between attempts after internal errors (decisions carry their own waits) and the attempt budget. */
  retry: RetryPolicy;
  /** How long a job stays locked to a dispatcher that stopped answering (killed) before another takes it over. Default 30000. */
  lockDurationMs?: number;
  /** BullMQ workers sharing `concurrency`, each taking jobs on its own. Default: one per slot, at most MAX_FETCH_LOOPS. */
  fetchLoops?: number;
  /** Attempts waiting on slow endpoints that may run beside `concurrency`, each replaced by a spare worker. Default 0. */
  slowConcurrency?: number;
  /** Where deliveries finished, retries and deferrals are counted. Default: nowhere. */
  metrics?: DeliveryMetrics;
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

// A killed dispatcher's job stalls once; a job stalling this often is crashing dispatchers and is failed.
const MAX_STALLED = 10;
// After the grace period, how long interrupted deliveries get to record themselves and go back.
const HAND_BACK_MS = 5000;
// Workers (each with its own blocking Redis connection) one dispatcher runs at most; past it, they share slots.
const MAX_FETCH_LOOPS = 64;
// A worker error repeating one already logged within this long is counted, not logged again.
const REPEAT_LOG_MS = 10_000;
// Distinct worker error messages remembered for that.
const REMEMBERED_ERRORS = 100;

const settlesWithin = (promise: Promise<unknown>, ms: number) =>
  Promise.race([
    promise.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref()),
  ]);

/** Creates and starts the worker. */
export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { redis, keys, log, concurrency, deliver, retry } = deps;
  const metrics = deps.metrics ?? NO_DELIVERY_METRICS;
  // Aborted once the grace period at shutdown is over: every delivery in flight is interrupted at
  // once. One signal for all (BullMQ makes an AbortController per job for a processor that takes
  // its own, which nothing here needs: only stop interrupts, and it interrupts every job).
  const interrupt = new AbortController();

  /** Attempts this job has made: kept in its progress, so they survive delays, hand-backs and restarts. */
  const attemptsMade = (job: Job<unknown>) => (typeof job.progress === "number" ? job.progress : 0);

  /** Parks the job in the delayed set until `at`; DelayedError tells the worker it has moved. */
  async function delay(job: Job<unknown>, token: string | undefined, at: number): Promise<never> {
    await job.moveToDelayed(at, token);
    throw new DelayedError();
  }

  /** Carries out a decision; throws what tells BullMQ the job's next state. */
  async function apply(decision: DeliveryDecision, job: Job<unknown>, token: string | undefined) {
    switch (decision.kind) {
      case "succeeded":
      case "skipped":
        return decision.kind;
      case "failed":
        throw new UnrecoverableError(decision.reason);
      case "retry":
        // Counted before the move: a crash in between re-runs the job as the next attempt, which is true.
        await job.updateProgress(attemptsMade(job) + 1);
        return delay(job, token, Date.now() + decision.delayMs);
      case "busy":
        return delay(job, token, Date.now() + decision.delayMs);
      case "handed-back":
        return delay(job, token, Date.now());
    }
  }

  /** An error `deliver` threw (store, Redis): retried by the schedule like a failed attempt, then final. */
  async function retryInternal(
    error: unknown,
    job: Job<unknown>,
    data: DeliveryJob,
    token: string | undefined,
  ) {
    const attempt = attemptsMade(job) + 1;
    const wait = scheduledDelay(retry, attempt, Math.random());
    log.error("internal error in a delivery", {
      jobId: job.id,
      attempt,
      retryInMs: wait,
      ...describeError(error),
    });
    metrics.decided(wait === null ? "failed" : "retry", data.committedAt);
    if (wait === null) throw new UnrecoverableError(`internal error: ${(error as Error).message}`);
    return apply({ kind: "retry", delayMs: wait, reason: "internal error" }, job, token);
  }

  /**
   * Runs a job; `onSlow` is its worker's (see DeliveryContext). Not async itself: it hands BullMQ
   * the attempt's own promise (an async function returning a promise adds turns of the queue).
   */
  const handle = (job: Job<unknown>, token: string | undefined, onSlow: () => () => void) => {
    const parsed = DeliveryJobSchema.safeParse(job.data);
    if (!parsed.success) {
      log.error("invalid delivery job dropped", { jobId: job.id, problems: parsed.error.issues.length });
      return Promise.reject(new UnrecoverableError("invalid delivery job"));
    }
    const data: DeliveryJob = parsed.data;
    // Every line about the delivery names the request that caused it; none when no request did (and
    // never the context this worker happened to be made in).
    const context = data.requestId === undefined ? undefined : { requestId: data.requestId };
    return runInRequestContext(context, () => attemptJob(job, data, token, onSlow));
  };

  /** One attempt at a validated job and what BullMQ is to do after it. */
  const attemptJob = async (
    job: Job<unknown>,
    data: DeliveryJob,
    token: string | undefined,
    onSlow: () => () => void,
  ) => {
    const { signal } = interrupt;
    if (signal.aborted) {
      metrics.decided("handed-back", data.committedAt);
      return apply({ kind: "handed-back" }, job, token);
    }
    let decision: DeliveryDecision;
    try {
      decision = await deliver(data, { attempt: attemptsMade(job) + 1, signal, onSlow });
    } catch (error) {
      return retryInternal(error, job, data, token);
    }
    metrics.decided(decision.kind, data.committedAt);
    // The common outcome at once: returning apply's promise would cost the job more microtask turns.
    if (decision.kind === "succeeded" || decision.kind === "skipped") return decision.kind;
    return apply(decision, job, token);
  };

  // One BullMQ worker per slot. A worker with free slots that takes a job first asks Redis for
  // another (a round trip, then whatever it brings) before it starts the one it has: under a steady
  // stream, every job waited for that. A worker of one slot starts its job at once, and the workers
  // (each its own fetch loop and blocking connection) take a burst's jobs side by side. Measured
  // under the load scenario (1,000 mutations/s): commit → receipt p50 8–10 → 4–5 ms, p99 41–63 → 20–25 ms
  // against four workers of eight slots. Throughput to one saturated receiver: the same with 32 in flight
  // there; 12–15% less at the default endpoint limit of 8 (bench/results/dispatch.md).
  const loops = Math.max(1, Math.min(deps.fetchLoops ?? MAX_FETCH_LOOPS, concurrency));
  // With Redis away, every worker's connection reports the same error, again at each reconnection attempt.
  const logged = new Map<string, { at: number; repeats: number }>();
  const reportError = (error: Error) => {
    const now = Date.now();
    const last = logged.get(error.message);
    if (last && now - last.at < REPEAT_LOG_MS) {
      last.repeats++;
      return;
    }
    setNewest(logged, error.message, { at: now, repeats: 0 }, REMEMBERED_ERRORS);
    log.warn("delivery worker error", {
      ...describeError(error),
      repeatsSinceLastLogged: last?.repeats ?? 0,
    });
  };
  const workers: Worker[] = [];
  /** A BullMQ worker of `slots`, taking jobs at once when `autorun`; the fetcher that starts and stops it. */
  const addWorker = (slots: number, autorun: boolean): Fetcher => {
    let taking = autorun;
    let inFlight = 0;
    const fetcher: Fetcher = {
      busy: () => inFlight > 0,
      start: () => {
        taking = true;
        void worker.resume();
      },
      stop: () => {
        taking = false;
        void worker.pause(true).catch(reportError);
      },
    };
    // A slow attempt hands this worker's slot to a spare until its answer is in. Spares are made and
    // started outside the delivery's request context: they outlive it, and must not carry its id.
    const slowEnded = () => runOutsideRequestContext(() => spares.slowEnded(fetcher));
    const onSlow = () => {
      runOutsideRequestContext(() => spares.slowStarted(fetcher));
      return slowEnded;
    };
    const settled = () => {
      inFlight--;
    };
    // Two parameters: BullMQ gives a processor that takes a third a signal of its own per job.
    const run = (job: Job<unknown>, token?: string) => {
      // A stopped worker still waiting on Redis may yet take one job (BullMQ's pause does not end the
      // wait): it goes straight back, unsent, so attempts at work stay within the concurrency.
      if (!taking) {
        metrics.decided("handed-back", 0);
        return apply({ kind: "handed-back" }, job, token);
      }
      inFlight++;
      const running = handle(job, token, onSlow);
      // Counted beside the job, not in its way: BullMQ awaits the handler's own promise.
      running.then(settled, settled);
      return running;
    };
    const worker = new Worker(DELIVERY_QUEUE, run, {
      connection: redis,
      prefix: keys.bullPrefix,
      concurrency: slots,
      autorun,
      lockDuration: deps.lockDurationMs ?? 30_000,
      stalledInterval: deps.lockDurationMs ?? 30_000,
      maxStalledCount: MAX_STALLED,
    });
    worker.on("error", reportError);
    workers.push(worker);
    return fetcher;
  };
  const spares = createSpareFetchers(deps.slowConcurrency ?? 0, () => addWorker(1, false));
  for (let i = 0; i < loops; i++)
    addWorker(Math.floor(concurrency / loops) + (i < concurrency % loops ? 1 : 0), true);
  const regular = [...workers];

  return {
    ready: () => Promise.all(regular.map((worker) => worker.waitUntilReady())).then(() => undefined),
    async stop(graceMs) {
      spares.close();
      const closing = Promise.all(workers.map((worker) => worker.close()));
      if (await settlesWithin(closing, graceMs)) return;
      log.warn("shutdown grace period over; handing in-flight deliveries back");
      interrupt.abort("dispatcher shutting down");
      if (!(await settlesWithin(closing, HAND_BACK_MS))) {
        log.error(
          "in-flight deliveries did not stop; another dispatcher takes them over when their locks expire",
        );
      }
    },
  };
}
