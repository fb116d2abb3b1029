/**
 * A delivery body stays under DELIVERY_MAX_BODY_BYTES (default 1 MiB): one
 * mutation whose elements for a webhook would make a larger body is delivered
 * in several parts, each element whole, in mutation order, each part its own
 * delivery (own request id) — against a real receiver and a real dispatcher.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../common/log.ts";
import { loadDispatcherConfig } from "../../dispatcher/config.ts";
import { type OpenDispatcher, openDispatcher } from "../../dispatcher/open-dispatcher.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { eventually } from "../support/eventually.ts";
import { graphqlClient } from "../support/graphql.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";

const LIMIT = 1024 * 1024;
const OPERATIONS = 100;
const NOTE_CHARS = 9000;

let t: TestApp;
let acme: ProvisionedTenant;
let receiver: Receiver;
let dispatcher: OpenDispatcher;
let gql: ReturnType<typeof graphqlClient>;

beforeAll(async () => {
  // The default limit: the test must hold for the shipped configuration.
  t = await createTestApp({ FEED_POLL_MS: "20" });
  expect(t.config.DELIVERY_MAX_BODY_BYTES).toBe(LIMIT);
  acme = await t.provision("acme");
  gql = graphqlClient(t, acme.adminToken);
  receiver = startReceiver();
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
const data = async (document: string) => {
  const result = await gql(document);
  expect(result.errors).toBeUndefined();
  return (result.data as { schema: Record<string, string> }).schema;
};
type Element = { data: { schemaAvailabilities: { data: { UID: string; Notes: string } } } };
type Delivery = { id: string; part: number; mutationId: string; status: string };

describe("a mutation larger than the delivery body limit", () => {
  test("100 inserts of 9,000-character notes (1.8 MB of elements): parts each ≤ 1 MiB, together the whole, in order", async () => {
    const created = await admin("POST", "/webhooks", {
      name: "notes",
      url: `${receiver.url}/notes`,
      type: "graphql",
      query:
        "subscription { schemaAvailabilities(operation: INSERT) { operation data { UID Notes } previous { Notes } } }",
    });
    expect(created.status).toBe(201);
    const webhookId = created.body.result.id as string;
    const { region } = await data(
      `mutation { schema { region: insertRegions(input: {Name: "North", Timezone: "UTC"}) } }`,
    );
    const { resource } = await data(
      `mutation { schema { resource: insertResources(input: {Name: "R", PrimaryRegionId: "${region}"}) } }`,
    );
    const note = (i: number) => `${String(i).padStart(3, "0")}${"n".repeat(NOTE_CHARS - 3)}`;
    const operations = Array.from(
      { length: OPERATIONS },
      (_, i) =>
        `a${i}: insertAvailabilities(input: {ResourceId: "${resource}", Start: "2030-01-01T00:00:00Z", Finish: "2030-01-01T01:00:00Z", Notes: "${note(i)}"})`,
    );
    const uids = await data(`mutation { schema { ${operations.join("\n")} } }`);

    const log = async () =>
      ((await admin("GET", `/webhooks/${webhookId}/deliveries?limit=200`)).body.result as Delivery[]).sort(
        (a, b) => a.part - b.part,
      );
    const requests = receiver.requests.filter((r) => r.path === "/notes");
    await eventually(
      async () => {
        const deliveries = await log();
        expect(deliveries.length).toBeGreaterThan(0);
        expect(deliveries.every((d) => d.status === "succeeded")).toBe(true);
        expect(receiver.requests.filter((r) => r.path === "/notes").length).toBe(deliveries.length);
      },
      { timeoutMs: 10_000 },
    );
    requests.push(...receiver.requests.filter((r) => r.path === "/notes"));
    const sizes = requests.map((r) => Buffer.byteLength(r.body));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(LIMIT);
    expect(sizes.reduce((a, b) => a + b)).toBeGreaterThan(1.5 * LIMIT);
    const deliveries = await log();
    expect(deliveries.length).toBe(2);
    expect(deliveries.map((d) => d.part)).toEqual([0, 1]);
    expect(new Set(deliveries.map((d) => d.mutationId)).size).toBe(1);
    const byId = new Map(requests.map((r) => [r.headers["service-request-id"], r]));
    expect(byId.size).toBe(requests.length);
    const elements = deliveries.flatMap((d) => JSON.parse(byId.get(d.id)?.body ?? "null") as Element[]);
    expect(elements.map((e) => e.data.schemaAvailabilities.data.UID)).toEqual(
      Array.from({ length: OPERATIONS }, (_, i) => uids[`a${i}`] as string),
    );
    expect(elements.map((e) => e.data.schemaAvailabilities.data.Notes)).toEqual(
      Array.from({ length: OPERATIONS }, (_, i) => note(i)),
    );

    // A part redelivered by hand goes again whole, under its own request id.
    const second = deliveries[1] as Delivery;
    const retried = await admin("POST", `/webhooks/${webhookId}/deliveries/${second.id}/retry`);
    expect(retried.status).toBe(202);
    await eventually(() =>
      expect(receiver.requests.filter((r) => r.path === "/notes").length).toBe(requests.length + 1),
    );
    const again = receiver.requests.filter((r) => r.path === "/notes").at(-1);
    expect(again?.headers["service-request-id"]).toBe(second.id);
    expect(again?.body).toBe(byId.get(second.id)?.body);
  }, 30_000);
});
