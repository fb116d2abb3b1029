/**
 * The API and a dispatcher together, in-process over the same store and Redis,
 * against a real receiver: a committed mutation arrives signed; failed
 * deliveries come back through manual retry and recover.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../common/log.ts";
import { loadDispatcherConfig } from "../../dispatcher/config.ts";
import { type OpenDispatcher, openDispatcher } from "../../dispatcher/open-dispatcher.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { eventually } from "../support/eventually.ts";
import { graphqlClient } from "../support/graphql.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { standardWebhooksProblem } from "../support/standard-webhooks.ts";

let t: TestApp;
let acme: ProvisionedTenant;
let receiver: Receiver;
let dispatcher: OpenDispatcher;
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
});
afterAll(async () => {
  await dispatcher.close(1000);
  await receiver.stop();
  await t.close();
});

const admin = (method: string, path: string, body?: unknown) =>
  t.call(method, path, { token: acme.adminToken, body });
/** The webhook these tests deploy: Regions changes, POSTed to `path` on the receiver with an X-Team header. */
const regionsHook = (path: string, team: string) => ({
  name: "regions",
  url: `${receiver.url}${path}`,
  type: "graphql",
  query: "subscription { schemaRegions { operation data { Name } } }",
  headers: { "X-Team": team },
});
const insertRegion = (name: string) =>
  graphqlClient(
    t,
    acme.adminToken,
  )(`mutation { schema { insertRegions(input: {Name: "${name}", Timezone: "UTC"}) } }`);
type Delivery = {
  id: string;
  status: string;
  attemptCount: number;
  attempts: { statusCode: number | null }[];
};
const deliveries = async (webhookId: string): Promise<Delivery[]> =>
  (await admin("GET", `/webhooks/${webhookId}/deliveries`)).body.result;

describe("deliveries end to end", () => {
  let webhookId = "";
  let secret = "";

  test("a committed mutation arrives signed, with the documented headers, and is logged as succeeded", async () => {
    const created = await admin("POST", "/webhooks", regionsHook("/hook", "ops"));
    expect(created.status).toBe(201);
    webhookId = created.body.result.id;
    secret = created.body.result.secret;
    await insertRegion("North");
    await eventually(() => expect(receiver.requests.length).toBe(1), { timeoutMs: 5000 });
    const request = receiver.requests[0];
    expect(JSON.parse(request?.body ?? "")).toEqual([
      { data: { schemaRegions: { operation: "INSERT", data: { Name: "North" } } } },
    ]);
    expect(request?.headers).toMatchObject({
      "content-type": "application/json",
      "service-webhook-id": webhookId,
      "x-team": "ops",
      "user-agent": expect.any(String),
    });
    expect(request?.headers["service-request-id"]).toBe(request?.headers["webhook-id"]);
    expect(
      await standardWebhooksProblem(secret, { headers: request?.headers ?? {}, body: request?.body ?? "" }),
    ).toBeNull();
    await eventually(async () =>
      expect((await deliveries(webhookId))[0]).toMatchObject({ status: "succeeded", attemptCount: 1 }),
    );
  });

  test("a failed delivery comes back with a manual retry, with the same request id", async () => {
    status = 500;
    receiver.requests.length = 0;
    await insertRegion("South");
    await eventually(
      async () => expect((await deliveries(webhookId))[0]).toMatchObject({ status: "failed" }),
      { timeoutMs: 5000 },
    );
    const [failed] = await deliveries(webhookId);
    expect(failed?.attempts.map((a) => a.statusCode)).toEqual([500, 500]);
    status = 200;
    const retried = await admin("POST", `/webhooks/${webhookId}/deliveries/${failed?.id}/retry`);
    expect(retried.status).toBe(202);
    await eventually(
      async () =>
        expect((await deliveries(webhookId))[0]).toMatchObject({ id: failed?.id, status: "succeeded" }),
      { timeoutMs: 5000 },
    );
    const ids = new Set(receiver.requests.map((r) => r.headers["service-request-id"]));
    expect(ids).toEqual(new Set([failed?.id]));
    expect(receiver.requests.length).toBe(3);
  });

  test("recover redelivers every failed delivery since a time", async () => {
    status = 503;
    const since = new Date().toISOString();
    await insertRegion("East");
    await insertRegion("West");
    await eventually(
      async () => expect((await deliveries(webhookId)).filter((d) => d.status === "failed").length).toBe(2),
      { timeoutMs: 5000 },
    );
    status = 200;
    const recovered = await admin("POST", `/webhooks/${webhookId}/recover`, { since });
    expect(recovered.body.result).toEqual({ requeued: 2 });
    await eventually(
      async () => expect((await deliveries(webhookId)).every((d) => d.status === "succeeded")).toBe(true),
      { timeoutMs: 5000 },
    );
    expect(
      (await admin("POST", `/webhooks/${webhookId}/deliveries/${crypto.randomUUID()}/retry`)).status,
    ).toBe(404);
  });

  test("an edit through PUT takes effect at the next delivery: new URL, new headers", async () => {
    receiver.requests.length = 0;
    const edited = await admin("PUT", `/webhooks/${webhookId}`, regionsHook("/edited", "dev"));
    expect(edited.status).toBe(200);
    await insertRegion("Centre");
    await eventually(() => expect(receiver.requests.length).toBe(1), { timeoutMs: 5000 });
    expect(receiver.requests[0]?.path).toBe("/edited");
    expect(receiver.requests[0]?.headers["x-team"]).toBe("dev");
  });

  test("a webhook disabled by 410 Gone refuses redelivery until its definition is PUT again", async () => {
    status = 410;
    const since = new Date().toISOString();
    await insertRegion("Gone");
    await eventually(
      async () => expect((await admin("GET", `/webhooks/${webhookId}`)).body.result.enabled).toBe(false),
      { timeoutMs: 5000 },
    );
    const [gone] = await deliveries(webhookId);
    expect(gone?.status).toBe("failed");
    for (const refused of [
      await admin("POST", `/webhooks/${webhookId}/recover`, { since }),
      await admin("POST", `/webhooks/${webhookId}/deliveries/${gone?.id}/retry`),
    ]) {
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({
        errorType: "conflict",
        message: expect.stringContaining("disabled"),
      });
    }
    expect((await deliveries(webhookId))[0]?.status).toBe("failed");

    status = 200;
    expect((await admin("PUT", `/webhooks/${webhookId}`, regionsHook("/edited", "dev"))).status).toBe(200);
    const recovered = await admin("POST", `/webhooks/${webhookId}/recover`, { since });
    expect(recovered.body.result).toEqual({ requeued: 1 });
    await eventually(
      async () =>
        expect((await deliveries(webhookId))[0]).toMatchObject({ id: gone?.id, status: "succeeded" }),
      { timeoutMs: 5000 },
    );
  });
});
