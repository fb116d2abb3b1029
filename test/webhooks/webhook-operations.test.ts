/**
 * Webhook operations (SPEC.md §12) end to end: the API and a dispatcher in-process over the same
 * store and Redis, against a real receiver. Secret rotation checked by the `standardwebhooks`
 * package, test deliveries, one delivery in full, re-enabling after 410 Gone, the delivery list's
 * filters and pages, and the webhook CLI's commands for them over real HTTP.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { runWebhookTool, serviceClient } from "../../api/admin/webhook-tool.ts";
import { createLogger } from "../../common/log.ts";
import { loadDispatcherConfig } from "../../dispatcher/config.ts";
import { type OpenDispatcher, openDispatcher } from "../../dispatcher/open-dispatcher.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { eventually } from "../support/eventually.ts";
import { graphqlClient } from "../support/graphql.ts";
import { type ReceivedRequest, type Receiver, startReceiver } from "../support/receiver.ts";

let t: TestApp;
let acme: ProvisionedTenant;
let receiver: Receiver;
let dispatcher: OpenDispatcher;
let server: { stop(close?: boolean): Promise<unknown>; url: string };
let status = 200;

beforeAll(async () => {
  t = await createTestApp({ FEED_POLL_MS: "20" });
  acme = await t.provision("acme");
  receiver = startReceiver(() => new Response("thanks", { status }));
  const config = loadDispatcherConfig({
    ...t.storeEnv,
    REDIS_URL: t.redis.url,
    REDIS_PREFIX: t.redis.prefix,
    LOG_LEVEL: "silent",
    DELIVERY_ALLOW_HTTP: "true",
    DELIVERY_ALLOW_PRIVATE_NETWORKS: "127.0.0.0/8",
    DELIVERY_RETRY_SCHEDULE: "30ms",
  });
  dispatcher = await openDispatcher(config, { redis: t.redis.redis, log: createLogger("silent") });
  await dispatcher.ready();
  t.feed.start();
  const listening = t.app.listen({ port: 0, hostname: "127.0.0.1" });
  server = { url: `http://127.0.0.1:${listening.server?.port}`, stop: async (c) => listening.stop(c) };
});
afterAll(async () => {
  await server.stop(true);
  await dispatcher.close(1000);
  await receiver.stop();
  await t.close();
});

const admin = (method: string, path: string, body?: unknown) =>
  t.call(method, path, { token: acme.adminToken, body });
let hooks = 0;
/** Creates a webhook on Regions changes POSTed to a path of its own. @returns its id, secret and path. */
async function createHook(
  query = "subscription { schemaRegions { operation data { Name } } }",
  headers = {},
) {
  const path = `/hook-${++hooks}`;
  const created = await admin("POST", "/webhooks", {
    name: `hook-${hooks}`,
    url: `${receiver.url}${path}`,
    type: "graphql",
    query,
    headers,
  });
  expect(created.status).toBe(201);
  return { id: created.body.result.id as string, secret: created.body.result.secret as string, path };
}
const insertRegion = async (name: string) => {
  const answer = await graphqlClient(
    t,
    acme.adminToken,
  )(`mutation { schema { insertRegions(input: {Name: "${name}", Timezone: "UTC"}) } }`);
  expect(answer.errors).toBeUndefined();
};
const receivedAt = (path: string) => receiver.requests.filter((r) => r.path === path);
/** Waits for the `n`th request to `path` (1-based). */
async function nth(path: string, n: number): Promise<ReceivedRequest> {
  await eventually(() => expect(receivedAt(path).length).toBeGreaterThanOrEqual(n), { timeoutMs: 5000 });
  return receivedAt(path)[n - 1] as ReceivedRequest;
}
const verifies = (secret: string, request: ReceivedRequest) => {
  try {
    new Webhook(secret).verify(request.body, request.headers);
    return true;
  } catch {
    return false;
  }
};
const deliveries = async (webhookId: string, query = "") =>
  (await admin("GET", `/webhooks/${webhookId}/deliveries${query}`)).body;

describe("secret rotation", () => {
  test("during the grace period a delivery verifies with the old and the new secret (new signature first); after it, only with the new", async () => {
    const hook = await createHook();
    const rotated = await admin("POST", `/webhooks/${hook.id}/secret/rotate`, { graceSeconds: 1 });
    expect(rotated.status).toBe(200);
    const secret = rotated.body.result.secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(secret).not.toBe(hook.secret);
    const read = await admin("GET", `/webhooks/${hook.id}`);
    expect(read.body.result.previousSecretExpiresAt).toEqual(expect.any(String));
    expect(JSON.stringify(read.body)).not.toContain(secret.slice(6));
    expect(JSON.stringify(read.body)).not.toContain(hook.secret.slice(6));

    await insertRegion("Graceful");
    const during = await nth(hook.path, 1);
    expect(during.headers["webhook-signature"]?.split(" ")).toHaveLength(2);
    expect(verifies(hook.secret, during)).toBe(true);
    expect(verifies(secret, during)).toBe(true);
    // The new secret's signature comes first: a receiver that checks one entry checks the new.
    const first = {
      ...during,
      headers: {
        ...during.headers,
        "webhook-signature": during.headers["webhook-signature"]?.split(" ")[0] ?? "",
      },
    };
    expect(verifies(secret, first)).toBe(true);

    await Bun.sleep(1100);
    await insertRegion("Graceless");
    const after = await nth(hook.path, 2);
    expect(after.headers["webhook-signature"]?.split(" ")).toHaveLength(1);
    expect(verifies(secret, after)).toBe(true);
    expect(verifies(hook.secret, after)).toBe(false);
    expect((await admin("GET", `/webhooks/${hook.id}`)).body.result.previousSecretExpiresAt).toBeNull();
  });

  test("the default grace is a day; bad grace periods get 400 validation_failed naming graceSeconds; a missing webhook 404", async () => {
    const hook = await createHook();
    const before = Date.now();
    const rotated = await admin("POST", `/webhooks/${hook.id}/secret/rotate`);
    expect(rotated.status).toBe(200);
    const ends = Date.parse((await admin("GET", `/webhooks/${hook.id}`)).body.result.previousSecretExpiresAt);
    expect(ends - before).toBeGreaterThanOrEqual(86_400_000);
    expect(ends - Date.now()).toBeLessThanOrEqual(86_400_000);
    for (const graceSeconds of [-1, 2.5, 30 * 86_400 + 1, "60"]) {
      const answer = await admin("POST", `/webhooks/${hook.id}/secret/rotate`, { graceSeconds });
      expect(answer.status).toBe(400);
      expect(answer.body.errorType).toBe("validation_failed");
      expect(answer.body.details[0].path).toBe("graceSeconds");
    }
    expect((await admin("POST", `/webhooks/${crypto.randomUUID()}/secret/rotate`, {})).status).toBe(404);
  });
});

describe("test deliveries", () => {
  test("an example shaped by the webhook's selection arrives signed and is logged as a test, in the list and in full", async () => {
    const hook = await createHook(
      "subscription { schemaRegions(operation: [UPDATE]) { when: timestamp operation data { Name Timezone } } }",
    );
    const sent = await admin("POST", `/webhooks/${hook.id}/test`);
    expect(sent.status).toBe(202);
    expect(sent.body.result).toMatchObject({ test: true, status: "pending" });
    const request = await nth(hook.path, 1);
    const body = new Webhook(hook.secret).verify(request.body, request.headers);
    expect(body).toEqual([
      {
        data: {
          schemaRegions: {
            when: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
            operation: "UPDATE",
            data: { Name: expect.any(String), Timezone: expect.any(String) },
          },
        },
      },
    ]);
    expect(request.headers["service-request-id"]).toBe(sent.body.result.id);
    await eventually(async () =>
      expect((await deliveries(hook.id)).result[0]).toMatchObject({
        id: sent.body.result.id,
        test: true,
        status: "succeeded",
      }),
    );
    const full = await admin("GET", `/webhooks/${hook.id}/deliveries/${sent.body.result.id}`);
    expect(full.body.result).toMatchObject({ test: true, request: { body: request.body } });

    await insertRegion("Real");
    await nth(hook.path, 1);
  });
});

describe("one delivery in full", () => {
  test("the body and headers sent, secret variables as {{ NAME }}, the values of then (not of now), each attempt; never the webhook secret", async () => {
    expect(
      (
        await admin("POST", "/configuration/extension", {
          key: "API_KEY",
          value: "k-very-secret-1",
          configType: "secret",
        })
      ).status,
    ).toBeLessThan(300);
    expect(
      (
        await admin("POST", "/configuration/extension", {
          key: "TEAM",
          value: "ops",
          configType: "plain-text",
        })
      ).status,
    ).toBeLessThan(300);
    const hook = await createHook(undefined, { "X-Key": "{{ API_KEY }}", "X-Team": "{{ TEAM }}" });
    receiver.respondWith(
      (r) =>
        new Response("answer", {
          status: r.path === hook.path && receivedAt(hook.path).length === 1 ? 500 : status,
        }),
    );
    await insertRegion("Detailed");
    const second = await nth(hook.path, 2);
    expect(second.headers["x-key"]).toBe("k-very-secret-1");
    const id = second.headers["service-request-id"] as string;
    await eventually(async () => expect((await deliveries(hook.id)).result[0]?.status).toBe("succeeded"));
    // Changed after it was sent: the log shows what was sent.
    await admin("POST", "/configuration/extension", {
      key: "TEAM",
      value: "platform",
      configType: "plain-text",
    });

    const full = await admin("GET", `/webhooks/${hook.id}/deliveries/${id}`);
    expect(full.status).toBe(200);
    const { result } = full.body;
    expect(result.request.body).toBe(second.body);
    expect(result.request.url).toBe(`${receiver.url}${hook.path}`);
    expect(result.request.headers).toMatchObject({
      "x-key": "{{ API_KEY }}",
      "x-team": "ops",
      "webhook-id": id,
      "webhook-signature": second.headers["webhook-signature"],
      "webhook-timestamp": second.headers["webhook-timestamp"],
      "content-type": "application/json",
    });
    expect(result.attempts).toHaveLength(2);
    expect(result.attempts.map((a: { statusCode: number }) => a.statusCode)).toEqual([500, 200]);
    for (const attempt of result.attempts) {
      expect(attempt).toMatchObject({
        at: expect.any(String),
        durationMs: expect.any(Number),
        responseBody: "answer",
      });
      expect(attempt.request.headers["x-key"]).toBe("{{ API_KEY }}");
    }
    const text = JSON.stringify(full.body);
    expect(text).not.toContain("k-very-secret-1");
    expect(text).not.toContain(hook.secret.slice(6));
    receiver.respondWith(() => new Response("thanks", { status }));

    expect((await admin("GET", `/webhooks/${hook.id}/deliveries/${crypto.randomUUID()}`)).status).toBe(404);
    const other = await createHook();
    expect((await admin("GET", `/webhooks/${other.id}/deliveries/${id}`)).status).toBe(404);
  });
});

describe("re-enabling after 410 Gone", () => {
  test("a 410 disables the webhook with when and why; POST enable re-enables it with who and when, and deliveries flow again; a PUT still re-enables", async () => {
    const hook = await createHook();
    const whoami = await admin("GET", "/auth/whoami");
    status = 410;
    await insertRegion("Gone");
    await eventually(
      async () => expect((await admin("GET", `/webhooks/${hook.id}`)).body.result.enabled).toBe(false),
      { timeoutMs: 5000 },
    );
    const disabled = (await admin("GET", `/webhooks/${hook.id}`)).body.result;
    expect(disabled.disabledReason).toEqual(expect.stringContaining("410"));
    expect(Date.parse(disabled.disabledAt)).toBeGreaterThan(Date.now() - 10_000);
    expect(disabled.enabledBy).toBeNull();
    status = 200;

    const enabled = await admin("POST", `/webhooks/${hook.id}/enable`);
    expect(enabled.status).toBe(200);
    expect(enabled.body.result).toMatchObject({
      enabled: true,
      enabledBy: whoami.body.result.userId,
      disabledAt: disabled.disabledAt,
      disabledReason: disabled.disabledReason,
    });
    expect(Date.parse(enabled.body.result.enabledAt)).toBeGreaterThanOrEqual(Date.parse(disabled.disabledAt));
    await insertRegion("Back");
    await nth(hook.path, 2);

    status = 410;
    await insertRegion("Gone again");
    await eventually(
      async () => expect((await admin("GET", `/webhooks/${hook.id}`)).body.result.enabled).toBe(false),
      { timeoutMs: 5000 },
    );
    status = 200;
    const definition = (await admin("GET", `/webhooks/${hook.id}`)).body.result;
    const put = await admin("PUT", `/webhooks/${hook.id}`, {
      name: definition.name,
      url: definition.url,
      type: "graphql",
      query: definition.query,
    });
    expect(put.body.result).toMatchObject({ enabled: true, enabledBy: whoami.body.result.userId });
    expect((await admin("POST", `/webhooks/${crypto.randomUUID()}/enable`)).status).toBe(404);
  });
});

describe("the delivery list", () => {
  test("filtered by status and time, paged by keyset with after=; bad values get 400 validation_failed naming each", async () => {
    const hook = await createHook();
    const start = new Date().toISOString();
    for (const name of ["P1", "P2", "P3"]) await insertRegion(name);
    await nth(hook.path, 3);
    await eventually(async () =>
      expect((await deliveries(hook.id, "?status=succeeded")).result).toHaveLength(3),
    );
    expect((await deliveries(hook.id, "?status=failed")).result).toEqual([]);
    expect((await deliveries(hook.id, `?since=${start}`)).result).toHaveLength(3);
    expect((await deliveries(hook.id, `?until=${start}`)).result).toHaveLength(0);

    const page1 = await deliveries(hook.id, "?limit=2");
    expect(page1.result).toHaveLength(2);
    const page2 = await deliveries(hook.id, `?limit=2&after=${page1.nextCursor}`);
    expect(page2.result).toHaveLength(1);
    expect(page2.nextCursor).toBeNull();
    const ids = [...page1.result, ...page2.result].map((d: { id: string }) => d.id);
    expect(new Set(ids).size).toBe(3);
    // The cursor's first name still works.
    expect((await deliveries(hook.id, `?limit=2&cursor=${page1.nextCursor}`)).result).toEqual(page2.result);

    const bad = await admin(
      "GET",
      `/webhooks/${hook.id}/deliveries?status=lost&since=yesterday&limit=0&after=${"x".repeat(10)}`,
    );
    expect(bad.status).toBe(400);
    expect(bad.body.errorType).toBe("validation_failed");
    expect(bad.body.details.map((d: { path: string }) => d.path).sort()).toEqual([
      "limit",
      "since",
      "status",
    ]);
    const badCursor = await admin("GET", `/webhooks/${hook.id}/deliveries?after=not-a-cursor`);
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.details).toEqual([{ path: "after", message: "not a cursor of this list" }]);
    const backwards = await admin(
      "GET",
      `/webhooks/${hook.id}/deliveries?since=${new Date().toISOString()}&until=${start}`,
    );
    expect(backwards.status).toBe(400);
    expect(backwards.body.details).toEqual([{ path: "until", message: "must be after since" }]);
  });
});

describe("the webhook CLI", () => {
  test("rotate-secret, test, enable and deliveries [--status] over real HTTP", async () => {
    const hook = await createHook();
    const name = `hook-${hooks}`;
    const run = (...argv: string[]) => runWebhookTool(argv, serviceClient(server.url, acme.adminToken));
    const rotated = await run("rotate-secret", name, "--grace", "60");
    expect(rotated[0]).toMatch(/^new signing secret \(shown once\): whsec_/);
    const sent = await run("test", name);
    expect(sent[0]).toMatch(/^test delivery [0-9a-f-]+ queued/);
    const request = await nth(hook.path, 1);
    const secret = rotated[0]?.split(": ")[1] ?? "";
    expect(verifies(secret, request)).toBe(true);
    expect(verifies(hook.secret, request)).toBe(true);
    await eventually(async () =>
      expect((await run("deliveries", name, "--status", "succeeded")).length).toBe(1),
    );
    const [line] = await run("deliveries", name);
    expect(line).toMatch(/\tsucceeded\t1 attempt\ttest$/);
    expect(await run("enable", name)).toEqual([`${name} is enabled`]);
    await expect(run("deliveries", name, "--status", "lost")).rejects.toThrow(/status/);
  });
});
