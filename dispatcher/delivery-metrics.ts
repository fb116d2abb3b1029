/**
 * The dispatcher's families: deliveries finished by outcome with their latency from the commit,
 * attempts by result with their duration, retries, deferrals, disabled webhooks, and the delivery
 * queue's depth read at scrape time. No label names a tenant, a webhook or an endpoint.
 */
import { Counter, Gauge, Histogram } from "prom-client";
import type { DeliveryQueue } from "../common/delivery-queue.ts";
import type { Registry } from "../common/metrics.ts";
import type { DeliveryOutcome } from "./decide-outcome.ts";

/** What the worker may do with a job (the kinds of deliver.ts's DeliveryDecision, named here as deliver.ts imports this). */
type DecisionKind = "succeeded" | "failed" | "retry" | "busy" | "handed-back" | "skipped";

/** What the deliverer and the worker report as they go. */
export interface DeliveryMetrics {
  /** An attempt logged with its outcome (the request sent, or the failure that kept it from being sent). */
  attempted(result: DeliveryOutcome["kind"], durationMs: number): void;
  /** A webhook disabled by its endpoint's answer (410 Gone). */
  webhookDisabled(): void;
  /** What the worker does with a job; `committedAt` is its mutation's commit (ms since the epoch). */
  decided(decision: DecisionKind, committedAt: number): void;
}

/** Measures nothing: for deliverers and workers assembled without a registry. */
export const NO_DELIVERY_METRICS: DeliveryMetrics = {
  attempted: () => undefined,
  webhookDisabled: () => undefined,
  decided: () => undefined,
};

const ATTEMPT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 30];
// From a fast first attempt to the end of the default schedule's last retry (about 3.6 h).
const LATENCY_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 1800, 3600, 10_800, 21_600,
];

/** Results an attempt is counted under, and outcomes a delivery finishes with: the label values. */
const RESULTS = ["succeeded", "retry", "failed"] as const;
const OUTCOMES = ["succeeded", "failed"] as const;

/** Counts kept as plain numbers until a scrape adds them to their counter (see createDeliveryMetrics). */
type Tally<K extends string> = Record<K, number>;

const tallyOf = <K extends string>(keys: readonly K[]): Tally<K> =>
  Object.fromEntries(keys.map((key) => [key, 0])) as Tally<K>;

/** Adds what `tally` counted since the last scrape to `counter` under `label`, and starts it over. */
function addTally<K extends string>(counter: Counter<string>, label: string, tally: Tally<K>): void {
  for (const key in tally) {
    if (tally[key] === 0) continue;
    counter.inc({ [label]: key }, tally[key]);
    tally[key] = 0;
  }
}

/**
 * The delivery families on `registry`. Every delivery adds to two counters and two histograms:
 * the counters count in plain numbers, added to the families as they are scraped (`collect`), so
 * each scrape is exact; the histograms observe through children bound to their label value, once
 * per label value (prom-client's label lookup per observation cost about a microsecond a delivery).
 */
export function createDeliveryMetrics(registry: Registry): DeliveryMetrics {
  const registers = [registry];
  const finished = tallyOf(OUTCOMES);
  const attemptResults = tallyOf(RESULTS);
  const deferred = { endpoint_busy: 0, shutdown: 0 };
  let retried = 0;
  new Counter({
    name: "webhook_deliveries_total",
    help: "Deliveries finished, by outcome: succeeded, or failed for good (retries spent, undeliverable, endpoint gone).",
    labelNames: ["outcome"],
    registers,
    collect() {
      addTally(this, "outcome", finished);
    },
  });
  const latency = new Histogram({
    name: "webhook_delivery_latency_seconds",
    help: "Time from the mutation's commit to its delivery's end (success or final failure), retries included.",
    labelNames: ["outcome"],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  new Counter({
    name: "webhook_delivery_attempts_total",
    help: "Delivery attempts logged, by result: succeeded, retry (failed, to be tried again) or failed (for good).",
    labelNames: ["result"],
    registers,
    collect() {
      addTally(this, "result", attemptResults);
    },
  });
  const attemptDuration = new Histogram({
    name: "webhook_delivery_attempt_duration_seconds",
    help: "Duration of one delivery attempt (DNS, connect, answer, first 1 KB of the body), by result.",
    labelNames: ["result"],
    buckets: ATTEMPT_BUCKETS,
    registers,
  });
  new Counter({
    name: "webhook_delivery_retries_total",
    help: "Deliveries put back to be retried after a failed attempt or an internal error (each spends an attempt).",
    registers,
    collect() {
      if (retried > 0) this.inc(retried);
      retried = 0;
    },
  });
  new Counter({
    name: "webhook_delivery_deferrals_total",
    help: "Jobs put back without an attempt: endpoint_busy (at its concurrency limit) or shutdown (handed back).",
    labelNames: ["reason"],
    registers,
    collect() {
      addTally(this, "reason", deferred);
    },
  });
  const disabled = new Counter({
    name: "webhooks_disabled_total",
    help: "Webhooks disabled because their endpoint answered 410 Gone.",
    registers,
  });
  const latencyOf = { succeeded: latency.labels("succeeded"), failed: latency.labels("failed") };
  const durationOf = {
    succeeded: attemptDuration.labels("succeeded"),
    retry: attemptDuration.labels("retry"),
    failed: attemptDuration.labels("failed"),
  };
  return {
    attempted(result, durationMs) {
      attemptResults[result]++;
      durationOf[result].observe(durationMs / 1000);
    },
    webhookDisabled: () => disabled.inc(),
    decided(decision, committedAt) {
      switch (decision) {
        case "succeeded":
        case "failed":
          finished[decision]++;
          latencyOf[decision].observe(Math.max(0, Date.now() - committedAt) / 1000);
          return;
        case "retry":
          retried++;
          return;
        case "busy":
          deferred.endpoint_busy++;
          return;
        case "handed-back":
          deferred.shutdown++;
          return;
        case "skipped":
          return;
      }
    },
  };
}

/** Job states whose counts are the queue's depth. */
const DEPTH_STATES = ["waiting", "delayed", "active"] as const;

/** Longest a scrape waits for Redis to count the queue; past it (Redis away) the gauge has no sample. */
const DEPTH_TIMEOUT_MS = 500;

/**
 * `delivery_queue_jobs{state}` on `registry`: the jobs waiting, delayed (retries, deferrals) and
 * active, counted by Redis in one round trip when scraped (LLEN and ZCARD: constant time).
 */
export function registerQueueDepth(registry: Registry, queue: DeliveryQueue): void {
  new Gauge({
    name: "delivery_queue_jobs",
    help: "Delivery jobs in the queue, by state: waiting (to be taken), delayed (retries and deferrals), active (being delivered).",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), DEPTH_TIMEOUT_MS);
      });
      const counts = await Promise.race([
        queue.getJobCounts(...DEPTH_STATES).catch(() => null),
        late,
      ]).finally(() => clearTimeout(timer));
      this.reset();
      if (counts) for (const state of DEPTH_STATES) this.set({ state }, counts[state] ?? 0);
    },
  });
}
