/**
 * The API process sweeps by itself: with RETENTION_SWEEP_MS short, a finished
 * delivery created and last changed long ago leaves the delivery log while
 * the service runs; a recent one stays.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eventually } from "../support/eventually.ts";
import { type RunningService, startService } from "../support/service-processes.ts";
import { SQL_UNDER_PORT, storeSql } from "../support/store-sql.ts";

const DAY = 86_400_000;
let service: RunningService;

beforeAll(async () => {
  service = await startService({ apiEnv: { RETENTION_SWEEP_MS: "100", DELIVERY_LOG_RETENTION_DAYS: "7" } });
});
afterAll(() => service.stop());

const api = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${service.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${service.token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the test reads the documented JSON answers
  return { status: response.status, body: (await response.json()) as any };
};

test.skipIf(!SQL_UNDER_PORT)(
  "a running API deletes finished deliveries past DELIVERY_LOG_RETENTION_DAYS",
  async () => {
    const created = await api("POST", "/webhooks", {
      name: "jobs",
      url: "http://127.0.0.1:9/hook",
      type: "graphql",
      query: "subscription { schemaJobs { operation } }",
    });
    expect(created.status).toBe(201);
    const webhookId: string = created.body.result.id;
    const tenantId = (await api("GET", "/auth/whoami")).body.result.tenantId as string;

    const now = Date.now();
    for (const [id, at] of [
      ["eight-days-old", now - 8 * DAY],
      ["six-days-old", now - 6 * DAY],
    ] as const)
      await storeSql(
        service.storeEnv,
        `INSERT INTO deliveries (tenant_id, id, webhook_id, event_id, status, body, attempts, committed_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'succeeded', '[]', 1, $5, $6, $7)`,
        [tenantId, id, webhookId, `mutation-${id}`, at, at, at],
      );

    const listed = async () =>
      ((await api("GET", `/webhooks/${webhookId}/deliveries`)).body.result as { id: string }[]).map(
        (d) => d.id,
      );
    await eventually(async () => expect(await listed()).toEqual(["six-days-old"]), { timeoutMs: 5000 });
  },
  30_000,
);
