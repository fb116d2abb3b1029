/**
 * Operations with the real processes (private Redis, `bun api/main.ts`, `bun dispatcher/main.ts`):
 * both /metrics after some traffic (the families and their labels, no tenant id), a request's
 * id from its answer to the dispatcher's line about the delivery its mutation made, and
 * /healthz and /readyz of both processes while Redis is stopped and after it is back.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually } from "../support/eventually.ts";
import { type ApiClient, apiClient } from "../support/flow/api-client.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type RunningService, startService } from "../support/service-processes.ts";

let service: RunningService;
let api: ApiClient;
let receiver: Receiver;
let tenantId = "";

beforeAll(async () => {
  // Debug: the dispatcher's line for a delivery that succeeded is written at debug only.
  service = await startService({ logLevel: "debug" });
  api = apiClient(service.base, service.token);
  receiver = startReceiver();
  tenantId = (await api.request("GET", "/auth/whoami")).body.result.tenantId;
}, 60_000);
afterAll(async () => {
  await receiver.stop();
  await service.stop();
});

/** The JSON lines a process wrote. */
const logLines = (output: string): Record<string, unknown>[] =>
  output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line));
const scrape = async (base: string) => {
  const response = await fetch(`${base}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
};
const families = (text: string) =>
  new Set(
    text
      .split("\n")
      .filter((line) => line.startsWith("# TYPE "))
      .map((line) => line.split(" ")[2]),
  );

describe("after some traffic", () => {
  let deliveryId = "";

  beforeAll(async () => {
    const created = await api.request("POST", "/webhooks", {
      body: {
        name: "regions",
        url: `${receiver.url}/hook`,
        type: "graphql",
        query: "subscription { schemaRegions { operation data { Name } } }",
      },
    });
    expect(created.status).toBe(201);
    const inserted = await api.request("POST", "/graphql/graphql", {
      headers: { "x-request-id": "flow-trace-1" },
      body: { query: 'mutation { schema { insertRegions(input: {Name: "North", Timezone: "UTC"}) } }' },
    });
    expect(inserted.status).toBe(200);
    expect(inserted.headers.get("x-request-id")).toBe("flow-trace-1");
    await api.request("POST", "/graphql/graphql", { body: { query: "{ nope }" } });
    await api.request("GET", `/webhooks/${tenantId}`);
    await eventually(() => expect(receiver.requests.length).toBe(1), { timeoutMs: 10_000 });
    deliveryId = receiver.requests[0]?.headers["service-request-id"] ?? "";
  }, 30_000);

  test("the dispatcher's line about the mutation's delivery carries the request's id", async () => {
    const line = await eventually(() => {
      const found = logLines(service.dispatcher.output()).find(
        (l) => l.msg === "delivered" && l.deliveryId === deliveryId,
      );
      if (!found) throw new Error("no line yet");
      return found;
    });
    expect(line.requestId).toBe("flow-trace-1");
    const apiLine = logLines(service.api.output()).find(
      (l) => l.msg === "request" && l.requestId === "flow-trace-1",
    );
    expect(apiLine).toMatchObject({ route: "/graphql/graphql", status: 200 });
  });

  test("the API's /metrics: HTTP, GraphQL, rate limits, feed lag, process, build", async () => {
    const text = await scrape(service.base);
    const names = families(text);
    for (const family of [
      "http_request_duration_seconds",
      "graphql_operations_total",
      "graphql_operation_duration_seconds",
      "rate_limited_requests_total",
      "change_feed_lag_changes",
      "change_feed_lag_seconds",
      "change_feed_partition_held",
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
      "build_info",
    ])
      expect(names.has(family)).toBe(true);
    expect(text).toContain(
      'http_request_duration_seconds_count{method="POST",route="/graphql/graphql",status="200"} 2',
    );
    expect(text).toContain(
      'http_request_duration_seconds_count{method="GET",route="/webhooks/:id",status="404"} 1',
    );
    expect(text).toContain('graphql_operations_total{type="mutation",code="none"} 1');
    expect(text).toContain('graphql_operations_total{type="unknown",code="GRAPHQL_VALIDATION_FAILED"} 1');
    expect(text).toContain('change_feed_lag_changes{partition="0"}');
    // The only API process reads every partition.
    expect(text).toContain('change_feed_partition_held{partition="0"} 1');
    expect(text).toMatch(/build_info\{version="[^"]+",commit="[^"]+",bun="[^"]+"\} 1/);
    expect(text).not.toContain(tenantId);
  });

  test("the dispatcher's /metrics: deliveries, attempts, retries, deferrals, disabled webhooks, queue depth", async () => {
    const text = await eventually(async () => {
      const scraped = await scrape(service.dispatcherBase);
      if (!scraped.includes('webhook_deliveries_total{outcome="succeeded"} 1')) throw new Error("not yet");
      return scraped;
    });
    const names = families(text);
    for (const family of [
      "webhook_deliveries_total",
      "webhook_delivery_latency_seconds",
      "webhook_delivery_attempts_total",
      "webhook_delivery_attempt_duration_seconds",
      "webhook_delivery_retries_total",
      "webhook_delivery_deferrals_total",
      "webhooks_disabled_total",
      "delivery_queue_jobs",
      "process_cpu_seconds_total",
      "build_info",
    ])
      expect(names.has(family)).toBe(true);
    expect(text).toContain('webhook_delivery_attempts_total{result="succeeded"} 1');
    expect(text).toContain('webhook_delivery_latency_seconds_count{outcome="succeeded"} 1');
    for (const state of ["waiting", "delayed", "active"])
      expect(text).toContain(`delivery_queue_jobs{state="${state}"}`);
    expect(text).not.toContain(tenantId);
  });
});

describe("health while Redis is away", () => {
  const status = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(5000) })).status;
  const body = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(5000) })).json();

  test("both /readyz answer 503 naming Redis, both /healthz 200; ready again once it is back", async () => {
    expect(await status(`${service.base}/readyz`)).toBe(200);
    expect(await status(`${service.dispatcherBase}/readyz`)).toBe(200);
    await service.redis.stop();
    try {
      const started = performance.now();
      expect(await body(`${service.base}/readyz`)).toEqual({
        status: "not_ready",
        checks: { store: "ok", redis: "down" },
      });
      expect(await body(`${service.dispatcherBase}/readyz`)).toEqual({
        status: "not_ready",
        checks: { workers: "ok", redis: "down" },
      });
      // Each check is bounded by its 1 s deadline: an orchestrator's probe is not left hanging.
      expect(performance.now() - started).toBeLessThan(5000);
      expect(await status(`${service.base}/healthz`)).toBe(200);
      expect(await status(`${service.dispatcherBase}/healthz`)).toBe(200);
      expect(await status(`${service.base}/version`)).toBe(200);
    } finally {
      await service.redis.start();
    }
    await eventually(async () => expect(await status(`${service.base}/readyz`)).toBe(200), {
      timeoutMs: 10_000,
    });
    await eventually(async () => expect(await status(`${service.dispatcherBase}/readyz`)).toBe(200), {
      timeoutMs: 10_000,
    });
  }, 30_000);
});
