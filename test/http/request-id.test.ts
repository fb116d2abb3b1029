/**
 * Request ids, in-process: the API and a dispatcher over the same store and Redis, each with a
 * logger whose lines the test reads, against a real receiver. Every answer carries an id (the
 * client's when sane); the request's log lines, its mutation's change-log entries, the delivery
 * job and the dispatcher's lines about that delivery carry the same one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../common/log.ts";
import { isSaneRequestId } from "../../common/request-context.ts";
import { loadDispatcherConfig } from "../../dispatcher/config.ts";
import { type OpenDispatcher, openDispatcher } from "../../dispatcher/open-dispatcher.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { eventually } from "../support/eventually.ts";
import { changeLog } from "../support/graphql.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";

type Line = Record<string, unknown>;
const apiLines: Line[] = [];
const dispatcherLines: Line[] = [];
const capture = (into: Line[]) => createLogger("debug", {}, (line) => into.push(JSON.parse(line)));

let t: TestApp;
let acme: ProvisionedTenant;
let receiver: Receiver;
let dispatcher: OpenDispatcher;
let status = 200;

beforeAll(async () => {
  t = await createTestApp({ FEED_POLL_MS: "20", MAX_BODY_BYTES: "1024" }, undefined, capture(apiLines));
  acme = await t.provision("acme");
  receiver = startReceiver(() => new Response("thanks", { status }));
  const config = loadDispatcherConfig({
    ...t.storeEnv,
    REDIS_URL: t.redis.url,
    REDIS_PREFIX: t.redis.prefix,
    DELIVERY_ALLOW_HTTP: "true",
    DELIVERY_ALLOW_PRIVATE_NETWORKS: "127.0.0.0/8",
    DELIVERY_RETRY_SCHEDULE: "30ms",
  });
  dispatcher = await openDispatcher(config, { redis: t.redis.redis, log: capture(dispatcherLines) });
  await dispatcher.ready();
});
afterAll(async () => {
  await dispatcher.close(1000);
  await receiver.stop();
  await t.close();
});

/** The first line of `lines` that `match` accepts, once there is one. */
const lineOf = (lines: Line[], match: (line: Line) => boolean) =>
  eventually(() => {
    const line = lines.find(match);
    if (!line) throw new Error("no such line yet");
    return line;
  });

const withId = (id: string | undefined, headers: Record<string, string> = {}) =>
  id === undefined ? headers : { ...headers, "x-request-id": id };

describe("X-Request-Id", () => {
  test("a sane id from the client is returned as it is, on every kind of answer", async () => {
    const answers = [
      await t.call("GET", "/auth/whoami", { token: acme.adminToken, headers: withId("ok-1") }),
      await t.call("GET", "/no/such/path", { headers: withId("nf-2") }),
      await t.call("GET", "/auth/whoami", { headers: withId("unauth-3") }),
      await t.call("POST", "/auth/token", {
        token: acme.adminToken,
        rawBody: "{not json",
        headers: withId("bad-4"),
      }),
      await t.call("POST", "/auth/token", {
        token: acme.adminToken,
        rawBody: `"${"x".repeat(2000)}"`,
        headers: withId("big-5"),
      }),
      await t.call("GET", "/healthz", { headers: withId("0190b5e4-7c1d-7aa0-9f5e-2b1f0c6a1e11") }),
    ];
    expect(answers.map((a) => [a.status, a.headers.get("x-request-id")])).toEqual([
      [200, "ok-1"],
      [404, "nf-2"],
      [401, "unauth-3"],
      [400, "bad-4"],
      [413, "big-5"],
      [200, "0190b5e4-7c1d-7aa0-9f5e-2b1f0c6a1e11"],
    ]);
  });

  test("a missing or insane id is replaced by a generated one, unique per request", async () => {
    const hostile = [
      undefined,
      "",
      "x".repeat(129),
      "has space",
      'a"b',
      "<img>",
      "é",
      "a;b",
      "%0d%0aSet-Cookie:x",
    ];
    const ids: string[] = [];
    for (const id of hostile) {
      const { headers } = await t.call("GET", "/healthz", { headers: withId(id) });
      const returned = headers.get("x-request-id") ?? "";
      expect(returned).not.toBe(id ?? "");
      expect(returned.length).toBeLessThanOrEqual(128);
      expect(isSaneRequestId(returned)).toBe(true);
      ids.push(returned);
    }
    expect(new Set(ids).size).toBe(hostile.length);
  });

  test("the request's log line carries its id", async () => {
    await t.call("GET", "/auth/whoami", { token: acme.adminToken, headers: withId("logged-7") });
    const line = apiLines.find((l) => l.msg === "request" && l.requestId === "logged-7");
    expect(line).toMatchObject({ route: "/auth/whoami", status: 200, method: "GET" });
  });
});

describe("a mutation's request id reaches its deliveries", () => {
  let webhookId = "";
  const insertRegion = (name: string, requestId: string) =>
    t.call("POST", "/graphql/graphql", {
      token: acme.adminToken,
      headers: withId(requestId),
      body: { query: `mutation { schema { insertRegions(input: {Name: "${name}", Timezone: "UTC"}) } }` },
    });

  beforeAll(async () => {
    const created = await t.call("POST", "/webhooks", {
      token: acme.adminToken,
      body: {
        name: "regions",
        url: `${receiver.url}/hook`,
        type: "graphql",
        query: "subscription { schemaRegions { operation data { Name } } }",
      },
    });
    expect(created.status).toBe(201);
    webhookId = created.body.result.id;
  });

  test("change-log entries and the delivery job keep it; the dispatcher's lines about the delivery carry it", async () => {
    const answer = await insertRegion("North", "trace-north");
    expect(answer.status).toBe(200);
    expect(answer.headers.get("x-request-id")).toBe("trace-north");
    const entries = (await changeLog(t, acme.tenant.id)).filter((e) => e.objectName === "Regions");
    expect(entries.map((e) => e.requestId)).toEqual(["trace-north"]);

    await t.feed.processBatch();
    // The delivery, from the log (its job may be done and gone from the queue by now: completed jobs leave
    // Redis at once). The dispatcher knows the request id only from the job, so its line proves the job kept it.
    const [delivery] = await t.store.listDeliveries(acme.tenant.id, webhookId, { limit: 10 });
    expect(delivery).toBeDefined();

    await eventually(() => expect(receiver.requests.length).toBe(1));
    const delivered = await lineOf(
      dispatcherLines,
      (l) => l.msg === "delivered" && l.deliveryId === delivery?.id,
    );
    expect(delivered?.requestId).toBe("trace-north");
    // The id names the request, never the delivery: the receiver dedups on service-request-id.
    expect(receiver.requests[0]?.headers["service-request-id"]).toBe(delivery?.id);
  });

  test("a retried delivery's lines carry the retry request's id", async () => {
    status = 500;
    await insertRegion("South", "trace-south");
    await t.feed.processBatch();
    const failed = await lineOf(
      dispatcherLines,
      (l) => l.msg === "delivery failed" && l.requestId === "trace-south",
    );
    expect(
      dispatcherLines.some((l) => l.msg === "delivery will be retried" && l.requestId === "trace-south"),
    ).toBe(true);
    status = 200;
    const retried = await t.call("POST", `/webhooks/${webhookId}/deliveries/${failed.deliveryId}/retry`, {
      token: acme.adminToken,
      headers: withId("trace-retry"),
    });
    expect(retried.status).toBe(202);
    const delivered = await lineOf(
      dispatcherLines,
      (l) => l.msg === "delivered" && l.deliveryId === failed.deliveryId,
    );
    expect(delivered?.requestId).toBe("trace-retry");
  });

  test("a line about another delivery carries none of these ids", () => {
    const strays = dispatcherLines.filter(
      (l) => l.requestId !== undefined && !String(l.requestId).startsWith("trace-"),
    );
    expect(strays).toEqual([]);
  });
});
