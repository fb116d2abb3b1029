/** The delivery families as a scrape reads them: exact at every scrape, at little cost per delivery. */
import { describe, expect, test } from "bun:test";
import { Counter } from "prom-client";
import { createMetricsRegistry } from "../../common/metrics.ts";
import { createDeliveryMetrics } from "../../dispatcher/delivery-metrics.ts";

/** The samples of `registry`'s exposition whose line starts with `prefix`. */
const samples = async (registry: ReturnType<typeof createMetricsRegistry>, prefix: string) =>
  (await registry.metrics()).split("\n").filter((line) => line.startsWith(prefix));

describe("delivery metrics", () => {
  test("every scrape counts exactly what happened before it, once", async () => {
    const registry = createMetricsRegistry();
    const metrics = createDeliveryMetrics(registry);
    for (let i = 0; i < 3; i++) {
      metrics.attempted("succeeded", 12);
      metrics.decided("succeeded", Date.now() - 40);
    }
    metrics.attempted("retry", 30);
    metrics.decided("retry", 0);
    metrics.decided("busy", 0);
    expect(await samples(registry, "webhook_delivery_attempts_total")).toEqual([
      'webhook_delivery_attempts_total{result="succeeded"} 3',
      'webhook_delivery_attempts_total{result="retry"} 1',
    ]);
    // Scraped again with nothing new: the same figures (nothing added twice).
    expect(await samples(registry, "webhook_delivery_attempts_total")).toEqual([
      'webhook_delivery_attempts_total{result="succeeded"} 3',
      'webhook_delivery_attempts_total{result="retry"} 1',
    ]);
    metrics.attempted("succeeded", 5);
    metrics.decided("succeeded", Date.now());
    metrics.decided("failed", Date.now());
    metrics.decided("handed-back", 0);
    const text = (await registry.metrics()).split("\n");
    expect(text).toContain('webhook_delivery_attempts_total{result="succeeded"} 4');
    expect(text).toContain('webhook_deliveries_total{outcome="succeeded"} 4');
    expect(text).toContain('webhook_deliveries_total{outcome="failed"} 1');
    expect(text).toContain("webhook_delivery_retries_total 1");
    expect(text).toContain('webhook_delivery_deferrals_total{reason="endpoint_busy"} 1');
    expect(text).toContain('webhook_delivery_deferrals_total{reason="shutdown"} 1');
    expect(text).toContain('webhook_delivery_attempt_duration_seconds_count{result="succeeded"} 4');
    expect(text).toContain(
      'webhook_delivery_attempt_duration_seconds_bucket{le="0.005",result="succeeded"} 1',
    );
    expect(text).toContain('webhook_delivery_latency_seconds_count{outcome="succeeded"} 4');
  });

  test("a delivery adds to no counter through prom-client; a scrape adds once per label value", async () => {
    // prom-client's counters increment through this method (each takes it as its `inc` when made).
    const counters = Counter.prototype as unknown as { incWithoutExemplar: (...args: unknown[]) => unknown };
    const original = counters.incWithoutExemplar;
    let incs = 0;
    counters.incWithoutExemplar = function (this: unknown, ...args: unknown[]) {
      incs++;
      return original.apply(this, args);
    };
    try {
      const registry = createMetricsRegistry();
      const metrics = createDeliveryMetrics(registry);
      for (let i = 0; i < 1000; i++) {
        metrics.attempted("succeeded", 3);
        metrics.decided("succeeded", Date.now());
      }
      // Each used to cost a label lookup and a hash per counter: 2,000 increments here.
      expect(incs).toBe(0);
      expect(await samples(registry, "webhook_deliveries_total")).toEqual([
        'webhook_deliveries_total{outcome="succeeded"} 1000',
      ]);
      // The scrape added each label value's count once (deliveries and attempts: one value each).
      expect(incs).toBe(2);
    } finally {
      counters.incWithoutExemplar = original;
    }
  });
});
