// @test-engines sqlite: its fixture (test/support/delivery-log.ts) writes webhooks and deliveries with bun:sqlite; the dispatcher's PostgreSQL port runs in the conformance suite and the flows
/**
 * The dispatcher's operations side: its listener's handler (paths, readiness, the metrics token)
 * by a table, and its metrics after real deliveries (real queue, store file, receivers): outcomes,
 * attempts, retries, a webhook disabled by 410, the queue's depth; a job's request id on the
 * lines about its delivery.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "bun";
import { enqueueDeliveries } from "../../common/delivery-queue.ts";
import { createMetricsRegistry } from "../../common/metrics.ts";
import type { OpenDispatcher } from "../../dispatcher/open-dispatcher.ts";
import { createOpsHandler } from "../../dispatcher/ops-server.ts";
import { eventually } from "../support/eventually.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type Harness, openHarness } from "./harness.ts";

const TOKEN = "metrics-token-0123456789";

describe("operations listener", () => {
  const registry = createMetricsRegistry();
  const checks = { redis: true, workers: true };
  const handle = createOpsHandler({
    metrics: registry,
    metricsToken: TOKEN,
    readiness: {
      redis: async () => checks.redis,
      workers: async () => {
        if (!checks.workers) throw new Error("not yet");
        return true;
      },
    },
  });
  const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
    handle(new Request(`http://127.0.0.1${path}`, { method, headers }));

  test("/healthz: 200 whatever the dependencies say", async () => {
    checks.redis = false;
    const answer = await get("/healthz");
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ status: "ok" });
    checks.redis = true;
  });

  const table: [string, { redis: boolean; workers: boolean }, number, Record<string, string>][] = [
    ["all up", { redis: true, workers: true }, 200, { redis: "ok", workers: "ok" }],
    ["Redis down", { redis: false, workers: true }, 503, { redis: "down", workers: "ok" }],
    [
      "workers not taking jobs (a check that throws)",
      { redis: true, workers: false },
      503,
      { redis: "ok", workers: "down" },
    ],
  ];
  for (const [name, state, status, named] of table) {
    test(`/readyz, ${name}: ${status}`, async () => {
      Object.assign(checks, state);
      const answer = await get("/readyz");
      expect(answer.status).toBe(status);
      expect(((await answer.json()) as { checks: unknown }).checks).toEqual(named);
    });
  }

  test("/metrics needs the token when one is set; other paths and methods are 404", async () => {
    expect((await get("/metrics")).status).toBe(401);
    expect((await get("/metrics", { authorization: "Bearer nope" })).status).toBe(401);
    const ok = await get("/metrics", { authorization: `Bearer ${TOKEN}` });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toContain("text/plain");
    for (const answer of [await get("/"), await get("/metrics/x"), await get("/healthz", {}, "POST")]) {
      expect(answer.status).toBe(404);
      expect(((await answer.json()) as { errorType: string }).errorType).toBe("not_found");
    }
  });

  test("no token configured: /metrics is open", async () => {
    const open = createOpsHandler({ metrics: registry, metricsToken: undefined, readiness: {} });
    expect((await open(new Request("http://127.0.0.1/metrics"))).status).toBe(200);
  });
});

describe("the listener's port", () => {
  test("a port in use stops the dispatcher at start with a message naming DISPATCHER_PORT", async () => {
    const h = openHarness();
    const taken = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("mine") });
    try {
      const child = spawn([process.execPath, "dispatcher/main.ts"], {
        cwd: `${import.meta.dir}/../..`,
        env: { ...process.env, ...h.env({ DISPATCHER_PORT: String(taken.port) }) },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [code, err] = await Promise.all([child.exited, new Response(child.stderr).text()]);
      expect(code).toBe(1);
      expect(err).toContain(`DISPATCHER_PORT: 127.0.0.1:${taken.port} is already in use`);
    } finally {
      await taken.stop(true);
      await h.close();
    }
  });
});

describe("delivery metrics", () => {
  let h: Harness;
  let dispatcher: OpenDispatcher;
  let ok: Receiver;
  let gone: Receiver;
  let failing: Receiver;
  let text = "";
  beforeAll(async () => {
    h = openHarness();
    ok = startReceiver();
    gone = startReceiver(() => new Response("gone", { status: 410 }));
    failing = startReceiver(() => new Response("no", { status: 500 }));
    h.store.addWebhook({ id: "w-ok", url: `${ok.url}/hook` });
    h.store.addWebhook({ id: "w-gone", url: `${gone.url}/hook` });
    h.store.addWebhook({ id: "w-failing", url: `${failing.url}/hook` });
    dispatcher = await h.start({ DELIVERY_RETRY_SCHEDULE: "20ms" });
    const jobs = [
      { ...h.store.addDelivery("w-ok"), requestId: "req-ok" },
      h.store.addDelivery("w-ok"),
      h.store.addDelivery("w-gone"),
      h.store.addDelivery("w-failing"),
    ];
    await enqueueDeliveries(h.queue, jobs);
    await eventually(() =>
      jobs.every((job) => ["succeeded", "failed"].includes(h.store.delivery(job.deliveryId)?.status ?? "")),
    );
    text = await eventually(async () => {
      const scraped = await dispatcher.metrics.metrics();
      if (!scraped.includes('webhook_deliveries_total{outcome="failed"} 2')) throw new Error("not yet");
      return scraped;
    });
  });
  afterAll(async () => {
    await h.close();
    await Promise.all([ok.stop(), gone.stop(), failing.stop()]);
  });

  const sample = (line: string) => expect(text.split("\n")).toContain(line);

  test("deliveries by outcome, with their latency from the commit", () => {
    sample('webhook_deliveries_total{outcome="succeeded"} 2');
    sample('webhook_deliveries_total{outcome="failed"} 2');
    expect(text).toContain('webhook_delivery_latency_seconds_count{outcome="succeeded"} 2');
  });

  test("attempts by result with their duration, retries, the disabled webhook", () => {
    sample('webhook_delivery_attempts_total{result="succeeded"} 2');
    sample('webhook_delivery_attempts_total{result="retry"} 1');
    sample('webhook_delivery_attempts_total{result="failed"} 2');
    expect(text).toContain('webhook_delivery_attempt_duration_seconds_count{result="retry"} 1');
    sample("webhook_delivery_retries_total 1");
    sample("webhooks_disabled_total 1");
  });

  test("the queue's depth by state, read at scrape time", () => {
    for (const state of ["waiting", "delayed", "active"]) sample(`delivery_queue_jobs{state="${state}"} 0`);
  });

  test("no webhook id, tenant id or endpoint in any label", () => {
    for (const secret of ["w-ok", "w-gone", h.store.tenantId, String(ok.port)])
      expect(text).not.toContain(secret);
  });

  test("the lines about a job's delivery carry its request id; the others none", () => {
    const ids = h.logLines.filter((l) => l.webhookId === "w-ok").map((l) => l.requestId);
    expect(ids.sort()).toEqual(["req-ok", undefined]);
    expect(h.logLines.filter((l) => l.requestId !== undefined && l.requestId !== "req-ok")).toEqual([]);
  });
});
