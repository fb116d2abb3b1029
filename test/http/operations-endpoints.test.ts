/**
 * The API's operations endpoints, in-process: /healthz, /readyz (and /readyz with Redis gone),
 * /version, the old /health, and /metrics with and without METRICS_TOKEN: its families after
 * some traffic, its labels route templates and codes, never a tenant id or a raw path.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import packageJson from "../../package.json" with { type: "json" };
import { freePort } from "../../scripts/private-redis.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { partitionOf } from "../support/change-log.ts";

const METRICS_TOKEN = "metrics-token-0123456789";

/** `family{labels} value` lines of an exposition, comments left out. */
const samples = (text: string) => text.split("\n").filter((line) => line !== "" && !line.startsWith("#"));
/** The label sets of `family`'s samples. */
const labelsOf = (text: string, family: string) =>
  samples(text)
    .filter((line) => line.startsWith(`${family}{`))
    .map((line) => line.slice(family.length, line.lastIndexOf("}") + 1));

describe("health and version", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ GIT_COMMIT: "0123456789abcdef0123456789abcdef01234567" });
  });
  afterAll(() => t.close());

  test("/healthz: the process runs", async () => {
    expect(await t.call("GET", "/healthz")).toMatchObject({ status: 200, body: { status: "ok" } });
  });

  test("/readyz: the store and Redis answer", async () => {
    expect(await t.call("GET", "/readyz")).toMatchObject({
      status: 200,
      body: { status: "ready", checks: { store: "ok", redis: "ok" } },
    });
  });

  test("/version: package version, the configured commit, Bun", async () => {
    expect((await t.call("GET", "/version")).body).toEqual({
      version: packageJson.version,
      commit: "0123456789abcdef0123456789abcdef01234567",
      bun: Bun.version,
    });
  });

  test("/health answers as before", async () => {
    expect(await t.call("GET", "/health")).toMatchObject({
      status: 200,
      body: { status: "ok", store: "ok", redis: "ok" },
    });
  });
});

describe("readiness without Redis", () => {
  let t: TestApp;
  beforeAll(async () => {
    // A port nobody listens on: the connection is refused, and retried, the whole time.
    t = await createTestApp({ REDIS_URL: `redis://127.0.0.1:${freePort()}` });
  });
  afterAll(() => t.close());

  test("/readyz answers 503 naming Redis, within its deadline; /healthz stays 200", async () => {
    const started = performance.now();
    const ready = await t.call("GET", "/readyz");
    const elapsed = performance.now() - started;
    expect(ready).toMatchObject({
      status: 503,
      body: { status: "not_ready", checks: { store: "ok", redis: "down" } },
    });
    expect(elapsed).toBeLessThan(2500);
    expect((await t.call("GET", "/healthz")).status).toBe(200);
  });
});

describe("/metrics", () => {
  let t: TestApp;
  let acme: ProvisionedTenant;
  let text = "";
  beforeAll(async () => {
    t = await createTestApp({ METRICS_TOKEN, RATE_LIMIT_TOKEN_PER_SECOND: "1", RATE_LIMIT_TOKEN_BURST: "5" });
    acme = await t.provision("acme");
    const token = acme.adminToken;
    const gql = (query: string) => t.call("POST", "/graphql/graphql", { token, body: { query } });
    await gql("{ jobs { edges { node { UID } } } }");
    await gql("mutation { schema { insertJobs(input: {}) } }");
    await gql("{ nope }");
    await t.call("GET", `/webhooks/${acme.tenant.id}`, { token });
    await t.call("GET", `/no/such/${acme.tenant.id}`);
    // A token of its own, past its burst of 5: at least one request refused.
    const busy = await t.addUser(acme.tenant.id, ["scheduler"]);
    for (let i = 0; i < 7; i++) await t.call("GET", "/auth/whoami", { token: busy.token });
    const scraped = await t.call("GET", "/metrics", {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get("content-type")).toContain("text/plain");
    text = String(scraped.body);
  });
  afterAll(() => t.close());

  test("needs METRICS_TOKEN when one is set", async () => {
    const none = await t.call("GET", "/metrics");
    const wrong = await t.call("GET", "/metrics", {
      headers: { authorization: "Bearer wrong-token-0123456789" },
    });
    const tenants = await t.call("GET", "/metrics", { token: acme.adminToken });
    for (const answer of [none, wrong, tenants]) {
      expect(answer.status).toBe(401);
      expect(answer.body.errorType).toBe("unauthorized");
    }
  });

  test("HTTP requests by method, route template and status", () => {
    const labels = labelsOf(text, "http_request_duration_seconds_count");
    expect(labels).toContain('{method="POST",route="/graphql/graphql",status="200"}');
    expect(labels).toContain('{method="GET",route="/webhooks/:id",status="404"}');
    expect(labels).toContain('{method="GET",route="unmatched",status="404"}');
    expect(labels).toContain('{method="GET",route="/auth/whoami",status="429"}');
  });

  test("GraphQL operations by type and code", () => {
    const labels = labelsOf(text, "graphql_operations_total");
    expect(labels).toContain('{type="query",code="none"}');
    expect(labels).toContain('{type="mutation",code="VALIDATION_FAILED"}');
    expect(labels).toContain('{type="unknown",code="GRAPHQL_VALIDATION_FAILED"}');
    expect(labelsOf(text, "graphql_operation_duration_seconds_count")).toContain('{type="query"}');
  });

  test("rate-limited requests, and the change feed's lag and partitions held, per partition", () => {
    const refused = samples(text).find((line) =>
      line.startsWith('rate_limited_requests_total{scope="token"}'),
    );
    expect(Number(refused?.split(" ")[1])).toBeGreaterThanOrEqual(1);
    const partitions = Array.from({ length: t.store.feedPartitions() }, (_, p) => `{partition="${p}"}`);
    expect(labelsOf(text, "change_feed_lag_changes")).toEqual(partitions);
    expect(labelsOf(text, "change_feed_lag_seconds")).toEqual(partitions);
    expect(labelsOf(text, "change_feed_partition_held")).toEqual(partitions);
    // The feed is not started here: no partition is held, and acme's has its mutations' entries behind.
    const held = samples(text).filter((line) => line.startsWith("change_feed_partition_held{"));
    expect(held.map((line) => line.split(" ")[1])).toEqual(partitions.map(() => "0"));
    const acmeLag = samples(text).find((line) =>
      line.startsWith(`change_feed_lag_changes{partition="${partitionOf(t.store, acme.tenant.id)}"}`),
    );
    expect(Number(acmeLag?.split(" ")[1])).toBeGreaterThan(0);
  });

  test("no tenant id, token or raw path in any sample", () => {
    expect(text).not.toContain(acme.tenant.id);
    expect(text).not.toContain(acme.adminToken);
    expect(text).not.toContain("/no/such");
  });
});
