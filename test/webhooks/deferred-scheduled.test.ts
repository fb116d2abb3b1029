/**
 * Deferred and scheduled webhooks end to end (SPEC.md §11): the API (feed,
 * event worker) and two dispatchers in-process over one store and Redis,
 * against a real receiver. Deferred: one signed POST per record at its due
 * time, none for a record failing the filter at fire time, a moved due time
 * rescheduled, a deleted record cancelled. Scheduled: one POST of `{}` per
 * tick however many dispatchers run, none once the webhook is deleted.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../common/log.ts";
import { loadDispatcherConfig } from "../../dispatcher/config.ts";
import { type OpenDispatcher, openDispatcher } from "../../dispatcher/open-dispatcher.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { eventually } from "../support/eventually.ts";
import { graphqlClient } from "../support/graphql.ts";
import { type ReceivedRequest, type Receiver, startReceiver } from "../support/receiver.ts";
import { standardWebhooksProblem } from "../support/standard-webhooks.ts";

let t: TestApp;
let acme: ProvisionedTenant;
let receiver: Receiver;
const dispatchers: OpenDispatcher[] = [];
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  t = await createTestApp(
    {
      FEED_POLL_MS: "20",
      // The contract's 5000 ms minimum from CreatedDate would make these tests wait 5 s a record.
      DEFERRED_WEBHOOKS_MIN_OFFSET_MS: "1000",
      SCHEDULED_WEBHOOKS_ALLOW_SECONDS: "true",
      LOG_LEVEL: "info",
    },
    undefined,
    createLogger("info", {}, (line) => lines.push(JSON.parse(line))),
  );
  acme = await t.provision("acme");
  receiver = startReceiver();
  for (let i = 0; i < 2; i++) {
    const config = loadDispatcherConfig({
      ...t.storeEnv,
      REDIS_URL: t.redis.url,
      REDIS_PREFIX: t.redis.prefix,
      LOG_LEVEL: "silent",
      DELIVERY_ALLOW_HTTP: "true",
      DELIVERY_ALLOW_PRIVATE_NETWORKS: "127.0.0.0/8",
      DELIVERY_RETRY_SCHEDULE: "30ms",
      DISPATCHER_PORT: "0",
    });
    const dispatcher = await openDispatcher(config, { redis: t.redis.redis, log: createLogger("silent") });
    await dispatcher.ready();
    dispatchers.push(dispatcher);
  }
  t.feed.start();
  t.events.start();
});
afterAll(async () => {
  await Promise.all(dispatchers.map((d) => d.close(1000)));
  await receiver.stop();
  await t.close();
});

const admin = (method: string, path: string, body?: unknown) =>
  t.call(method, path, { token: acme.adminToken, body });
const gql = () => graphqlClient(t, acme.adminToken);
const at = (path: string) => receiver.requests.filter((r) => r.path === path);
const skipped = (reason: string) =>
  lines.filter((l) => l.msg === "deferred firing skipped" && String(l.reason).includes(reason));

/** A JSON value's shape: objects by their keys (sorted), arrays by their first element, leaves by type. */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return [value.length === 0 ? "empty" : shapeOf(value[0])];
  if (value !== null && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, inner]) => [key, shapeOf(inner)]),
    );
  return typeof value;
}

async function insertRegion(name: string): Promise<{ uid: string; insertedAt: number }> {
  const insertedAt = Date.now();
  const answer = await gql()(
    `mutation { schema { insertRegions(input: {Name: "${name}", Timezone: "UTC"}) } }`,
  );
  return {
    uid: (answer.data?.schema as { insertRegions: string } | undefined)?.insertRegions as string,
    insertedAt,
  };
}

describe("deferred webhooks", () => {
  let regionsHook = { id: "", secret: "" };

  test("the deferred schema is served as SDL, one subscription field per object on the tenant's types", async () => {
    const { status, body, headers } = await admin("GET", "/webhooks/deferred/schema");
    expect(status).toBe(200);
    expect(headers.get("content-type")).toContain("text/plain");
    expect(body).toContain("type Subscription {");
    expect(body).toMatch(/jobs\(filter: String\): Jobs/);
    expect(body).toMatch(/JobAllocations\(/);
  });

  test.each<[string, Record<string, unknown>, string, RegExp]>([
    ["an offset from CreatedDate under the minimum", { offset: 500 }, "offset", /at least 1000 ms/],
    ["a field that is not an Instant", { field: "Name" }, "field", /not an Instant/],
    ["an unknown field", { field: "Nope" }, "field", /no field 'Nope'/],
    [
      "an offset field of the wrong type",
      { offset: { field: "Name" } },
      "offset.field",
      /not an Int, Decimal or Duration/,
    ],
    [
      "a query against the change schema",
      { query: "subscription { schemaRegions { operation } }" },
      "query",
      /Cannot query field/,
    ],
    ["a filter that does not parse", { filter: "Name ==" }, "filter", /./],
    [
      "a query filter naming an unknown field",
      { query: `subscription { regions(filter: "Nope == 1") { UID } }` },
      "query.filter",
      /Nope/,
    ],
  ])("refuses %s: 400 validation_failed naming %p", async (_, over, path, message) => {
    const { status, body } = await admin("POST", "/webhooks", {
      name: `bad-${crypto.randomUUID().slice(0, 8)}`,
      url: `${receiver.url}/bad`,
      type: "graphql_deferred",
      field: "CreatedDate",
      offset: 2000,
      query: "subscription { regions { UID Name } }",
      ...over,
    });
    expect(status).toBe(400);
    expect(body.errorType).toBe("validation_failed");
    const detail = (body.details as { path: string; message: string }[]).find((d) => d.path === path);
    expect(detail?.message).toMatch(message);
  });

  test("a record fires once, signed, about 2 s after its insert (CreatedDate + 2000 ms), as the query reads it", async () => {
    const created = await admin("POST", "/webhooks", {
      name: "regions-later",
      url: `${receiver.url}/regions`,
      type: "graphql_deferred",
      field: "CreatedDate",
      offset: 2000,
      query: "subscription { regions { UID Name } }",
      filter: "Name != 'Skip'",
    });
    expect(created.status).toBe(201);
    expect(created.body.result).toMatchObject({
      type: "graphql_deferred",
      field: "CreatedDate",
      offset: 2000,
    });
    regionsHook = { id: created.body.result.id, secret: created.body.result.secret };
    const north = await insertRegion("North");
    const south = await insertRegion("South");
    await eventually(() => expect(at("/regions")).toHaveLength(2), { timeoutMs: 6000 });
    const byUid = (uid: string) => at("/regions").find((r) => r.body.includes(uid)) as ReceivedRequest;
    for (const [record, name] of [
      [north, "North"],
      [south, "South"],
    ] as const) {
      const request = byUid(record.uid);
      expect(JSON.parse(request.body)).toEqual([{ data: { regions: { UID: record.uid, Name: name } } }]);
      expect(await standardWebhooksProblem(regionsHook.secret, request)).toBeNull();
      // Due 2 s after the insert; the delayed job fires within the queue's resolution.
      expect(request.receivedAt - record.insertedAt).toBeGreaterThanOrEqual(1900);
      expect(request.receivedAt - record.insertedAt).toBeLessThan(4000);
    }
    const listed = (await admin("GET", `/webhooks/${regionsHook.id}/deliveries`)).body.result as {
      id: string;
      eventId: string;
      status: string;
    }[];
    expect(listed).toHaveLength(2);
    for (const { uid } of [north, south])
      expect(listed.some((d) => new RegExp(`^deferred:${uid}:\\d+$`).test(d.eventId))).toBe(true);
    expect(new Set(listed.map((d) => d.id))).toEqual(
      new Set(at("/regions").map((r) => r.headers["service-request-id"] as string)),
    );
    await Bun.sleep(500);
    expect(at("/regions")).toHaveLength(2);
  });

  test("a record updated to fail the filter before its due time is not sent; the firing is logged as skipped", async () => {
    receiver.requests.length = 0;
    const east = await insertRegion("East");
    await gql()(`mutation { schema { updateRegions(input: {UID: "${east.uid}", Name: "Skip"}) } }`);
    await eventually(() => expect(skipped("filter").length).toBeGreaterThanOrEqual(1), { timeoutMs: 6000 });
    expect(skipped("filter").map((l) => l.recordUid)).toContain(east.uid);
    await Bun.sleep(300);
    expect(at("/regions")).toHaveLength(0);
  });

  test("a deleted record's firing is cancelled", async () => {
    receiver.requests.length = 0;
    const west = await insertRegion("West");
    await gql()(`mutation { schema { deleteRegions(UID: "${west.uid}") } }`);
    await Bun.sleep(3000);
    expect(at("/regions")).toHaveLength(0);
    // Cancelled, not merely skipped when due: its firing never ran.
    expect(lines.filter((l) => l.recordUid === west.uid)).toEqual([]);
  });

  test("a changed due time reschedules: the record fires once, at the new time (Jobs.Start, with its relationships)", async () => {
    const created = await admin("POST", "/webhooks", {
      name: "jobs-at-start",
      url: `${receiver.url}/jobs`,
      type: "graphql_deferred",
      field: "Start",
      offset: 0,
      query: "subscription { jobs { UID Name JobAllocations { UID } } }",
    });
    expect(created.status).toBe(201);
    const region = await insertRegion("Jobs region");
    const first = new Date(Date.now() + 1500).toISOString();
    const inserted = await gql()(
      `mutation { schema { insertJobs(input: {Duration: 30, RegionId: "${region.uid}", Start: "${first}"}) } }`,
    );
    const job = (inserted.data?.schema as { insertJobs: string } | undefined)?.insertJobs as string;
    const movedTo = Date.now() + 3000;
    await gql()(
      `mutation { schema { updateJobs(input: {UID: "${job}", Start: "${new Date(movedTo).toISOString()}"}) } }`,
    );
    await eventually(() => expect(at("/jobs")).toHaveLength(1), { timeoutMs: 6000 });
    const [request] = at("/jobs");
    expect(request?.receivedAt).toBeGreaterThanOrEqual(movedTo - 100);
    const [element] = JSON.parse(request?.body ?? "[]");
    expect(element).toEqual({ data: { jobs: { UID: job, Name: expect.any(String), JobAllocations: [] } } });
    await Bun.sleep(500);
    expect(at("/jobs")).toHaveLength(1);
    // The first due time's firing never sent: cancelled when the record moved or, when the move's
    // cancellation came first on a loaded machine (it ran before the insert's firing was queued),
    // skipped when due because the due time changed — never for another reason.
    expect(lines.filter((l) => l.recordUid === job).map((l) => [l.msg, l.reason])).toEqual(
      lines.some((l) => l.recordUid === job) ? [["deferred firing skipped", "the due time changed"]] : [],
    );
  });
});

describe("scheduled webhooks", () => {
  test.each<[string, string, RegExp]>([
    ["* * * *", "cron", /at position 7: expected 5 fields/],
    ["* 24 * * *", "cron", /at position 2: hour: 24 is out of range 0-23/],
  ])("refuses cron %p: 400 validation_failed naming the field and position", async (cron, path, message) => {
    const { status, body } = await admin("POST", "/webhooks", {
      name: `cron-${crypto.randomUUID().slice(0, 8)}`,
      url: `${receiver.url}/bad`,
      type: "scheduled",
      cron,
    });
    expect(status).toBe(400);
    expect(body.errorType).toBe("validation_failed");
    expect(body.details).toContainEqual({ path, message: expect.stringMatching(message) });
  });

  test("fires {} once per tick with two dispatchers running, and stops when deleted", async () => {
    const created = await admin("POST", "/webhooks", {
      name: "every-second",
      url: `${receiver.url}/tick`,
      type: "scheduled",
      cron: "* * * * * *",
    });
    expect(created.status).toBe(201);
    expect(created.body.result).toMatchObject({ type: "scheduled", cron: "* * * * * *" });
    expect(created.body.result.query).toBeUndefined();
    const id = created.body.result.id as string;
    await eventually(() => expect(at("/tick").length).toBeGreaterThanOrEqual(3), { timeoutMs: 6000 });
    expect((await admin("DELETE", `/webhooks/${id}`)).status).toBe(200);
    const ticks = at("/tick");
    await Bun.sleep(1500);
    // A tick already taken when the webhook went may still arrive; no new one is made.
    expect(at("/tick").length).toBeLessThanOrEqual(ticks.length + 1);
    const all = at("/tick");
    for (const request of all) {
      expect(request.body).toBe("{}");
      expect(await standardWebhooksProblem(created.body.result.secret, request)).toBeNull();
    }
    // One POST per tick: distinct delivery ids, one a second.
    const ids = all.map((r) => r.headers["service-request-id"]);
    expect(new Set(ids).size).toBe(all.length);
    const seconds = all.map((r) => Math.round(r.receivedAt / 1000));
    expect(new Set(seconds).size).toBeGreaterThanOrEqual(all.length - 1);
  });
});

describe("test deliveries of the new kinds", () => {
  test("a scheduled webhook's test POSTs {} signed, logged as a test with event id test:<id> and no mutation", async () => {
    const created = await admin("POST", "/webhooks", {
      name: "new-year",
      url: `${receiver.url}/new-year`,
      type: "scheduled",
      cron: "0 0 1 1 *",
    });
    expect(created.status).toBe(201);
    const id = created.body.result.id as string;
    const sent = await admin("POST", `/webhooks/${id}/test`);
    expect(sent.status).toBe(202);
    await eventually(() => expect(at("/new-year")).toHaveLength(1), { timeoutMs: 6000 });
    const [request] = at("/new-year") as [ReceivedRequest];
    expect(request.body).toBe("{}");
    expect(await standardWebhooksProblem(created.body.result.secret, request)).toBeNull();
    expect(request.headers["service-request-id"]).toBe(sent.body.result.id);
    const [listed] = (await admin("GET", `/webhooks/${id}/deliveries`)).body.result;
    expect(listed).toMatchObject({ id: sent.body.result.id, test: true, mutationId: null });
    expect(listed.eventId).toMatch(/^test:[0-9a-f-]{36}$/);
    expect((await admin("DELETE", `/webhooks/${id}`)).status).toBe(200);
  });

  test("a deferred webhook's test POSTs, signed and logged as a test, an element of the same shape as a real firing of its query (every key, nested, alike)", async () => {
    const query = `subscription { work: jobs { UID Name JobStatus Start Duration Locked Quantity CreatedDate
      RegionId Region { Name Timezone } JobAllocations { UID Status TeamLeader Resource { Name Rating } }
      ...more } }
      fragment more on Jobs { Description __typename }`;
    const created = await admin("POST", "/webhooks", {
      name: "jobs-test",
      url: `${receiver.url}/jobs-test`,
      type: "graphql_deferred",
      field: "CreatedDate",
      offset: 2000,
      query,
    });
    expect(created.status).toBe(201);
    const id = created.body.result.id as string;
    const sent = await admin("POST", `/webhooks/${id}/test`);
    expect(sent.status).toBe(202);
    await eventually(() => expect(at("/jobs-test")).toHaveLength(1), { timeoutMs: 6000 });
    const [example] = at("/jobs-test") as [ReceivedRequest];
    expect(await standardWebhooksProblem(created.body.result.secret, example)).toBeNull();
    expect(example.headers["service-request-id"]).toBe(sent.body.result.id);
    const [listed] = (await admin("GET", `/webhooks/${id}/deliveries`)).body.result;
    expect(listed).toMatchObject({ id: sent.body.result.id, test: true, mutationId: null });
    expect(listed.eventId).toMatch(/^test:[0-9a-f-]{36}$/);
    // A real firing of the same query, every selected value set, one child for the relationship.
    const inserted = await gql()(`mutation { schema {
      r: insertRegions(input: {Name: "Test region", Timezone: "UTC"}, idAlias: "r")
      v: insertResources(input: {Name: "Van", PrimaryRegionId: "r", Rating: 3}, idAlias: "v")
      j: insertJobs(input: {Duration: 30, RegionId: "r", Start: "2030-01-01T10:00:00Z", Quantity: 2,
        Description: "real"}, idAlias: "j")
      a: insertJobAllocations(input: {JobId: "j", ResourceId: "v"})
    } }`);
    expect(inserted.errors).toBeUndefined();
    await eventually(() => expect(at("/jobs-test")).toHaveLength(2), { timeoutMs: 6000 });
    const real = JSON.parse((at("/jobs-test")[1] as ReceivedRequest).body);
    const shown = JSON.parse(example.body);
    expect(real[0].data.work.JobAllocations).toHaveLength(1);
    expect(shapeOf(shown)).toEqual(shapeOf(real));
    expect(shown).toEqual([
      {
        data: {
          work: expect.objectContaining({
            UID: "00000000-0000-4000-8000-000000000000",
            __typename: "Jobs",
            Start: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
            Duration: 60,
            JobAllocations: [expect.objectContaining({ Resource: { Name: "example Name", Rating: 42 } })],
          }),
        },
      },
    ]);
    expect((await admin("DELETE", `/webhooks/${id}`)).status).toBe(200);
  });
});
