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

/** The delivery families on `registry`. */
export function createDeliveryMetrics(registry: Registry): DeliveryMetrics {
  const registers = [registry];
  const deliveries = new Counter({
    name: "webhook_deliveries_total",
    help: "Deliveries finished, by outcome: succeeded, or failed for good (retries spent, undeliverable, endpoint gone).",
    labelNames: ["outcome"],
    registers,
  });
  const latency = new Histogram({
    name: "webhook_delivery_latency_seconds",
    help: "Time from the mutation's commit to its delivery's end (success or final failure), retries included.",
    labelNames: ["outcome"],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const attempts = new Counter({
    name: "webhook_delivery_attempts_total",
    help: "Delivery attempts logged, by result: succeeded, retry (failed, to be tried again) or failed (for good).",
    labelNames: ["result"],
    registers,
  });
  const attemptDuration = new Histogram({
    name: "webhook_delivery_attempt_duration_seconds",
    help: "Duration of one delivery attempt (DNS, connect, answer, first 1 KB of the body), by result.",
    labelNames: ["result"],
    buckets: ATTEMPT_BUCKETS,
    registers,
  });
  const retries = new Counter({
    name: "webhook_delivery_retries_total",
    help: "Deliveries put back to be retried after a failed attempt or an internal error (each spends an attempt).",
    registers,
  });
  const deferrals = new Counter({
    name: "webhook_delivery_deferrals_total",
    help: "Jobs put back without an attempt: endpoint_busy (at its concurrency limit) or shutdown (handed back).",
    labelNames: ["reason"],
    registers,
  });
  const disabled = new Counter({
    name: "webhooks_disabled_total",
    help: "Webhooks disabled because their endpoint answered 410 Gone.",
    registers,
  });
  return {
    attempted(result, durationMs) {
      attempts.inc({ result });
      attemptDuration.observe({ result }, durationMs / 1000);
    },
    webhookDisabled: () => disabled.inc(),
    decided(decision, committedAt) {
      switch (decision) {
        case "succeeded":
        case "failed":
          deliveries.inc({ outcome: decision });
          latency.observe({ outcome: decision }, Math.max(0, Date.now() - committedAt) / 1000);
          return;
        case "retry":
          retries.inc();
          return;
        case "busy":
          deferrals.inc({ reason: "endpoint_busy" });
          return;
        case "handed-back":
          deferrals.inc({ reason: "shutdown" });
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
