import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { openDeliveryStore } from "../../common/delivery-log/open-delivery-store.ts";
import { storeLocationOf } from "../../common/store/store-location.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { graphqlClient } from "../support/graphql.ts";
import { queuedJobs } from "../support/queue.ts";

let t: TestApp;
let acme: ProvisionedTenant;
let gql: ReturnType<typeof graphqlClient>;
let regionId = "";

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.provision("acme");
  gql = graphqlClient(t, acme.adminToken);
  const r = await gql(`mutation { schema { insertRegions(input: {Name: "North", Timezone: "UTC"}) } }`);
  regionId = (r.data as { schema: { insertRegions: string } }).schema.insertRegions;
  await t.feed.processBatch();
});
afterAll(() => t.close());

/** Creates a webhook and returns its id. */
const hook = async (query: string) => {
  const { status, body } = await t.call("POST", "/webhooks", {
    token: acme.adminToken,
    body: {
      name: `h-${crypto.randomUUID().slice(0, 8)}`,
      url: "https://receiver.example.com/hook",
      type: "graphql",
      query,
    },
  });
  expect(status).toBe(201);
  return body.result.id as string;
};
const jobsFor = async (webhookId: string) =>
  (await queuedJobs(t.redis)).filter((job) => job.data.webhookId === webhookId);
const mutate = async (document: string) => {
  const result = await gql(document);
  expect(result.errors).toBeUndefined();
  return (result.data as { schema: Record<string, string> }).schema;
};
const deleteAllWebhooks = async () => {
  for (const w of (await t.call("GET", "/webhooks", { token: acme.adminToken })).body.result) {
    await t.call("DELETE", `/webhooks/${w.id}`, { token: acme.adminToken });
  }
};
beforeEach(deleteAllWebhooks);

describe("matching committed changes", () => {
  test("the seed's subscription: INSERT, UPDATE and DELETE elements, byte for byte", async () => {
    const id = await hook(
      `subscription { schemaJobs { operation timestamp data { UID Name JobStatus Duration } previous { UID Name JobStatus Duration } } }`,
    );
    const { job } = await mutate(
      `mutation { schema { job: insertJobs(input: {Duration: 30, RegionId: "${regionId}"}) } }`,
    );
    await mutate(`mutation { schema { updateJobs(input: {UID: "${job}", JobStatus: "Cancelled"}) } }`);
    await mutate(`mutation { schema { deleteJobs(UID: "${job}") } }`);
    expect(await t.feed.processBatch()).toBe(3);
    const jobs = await jobsFor(id);
    expect(jobs.length).toBe(3);
    const bodies = jobs
      .map((j) => j.data)
      .sort((a, b) => a.committedAt - b.committedAt || a.eventId.localeCompare(b.eventId));
    const name = (
      (bodies[0] as { body: unknown[] }).body[0] as { data: { schemaJobs: { data: { Name: string } } } }
    ).data.schemaJobs.data.Name;
    const stamp = (i: number) => new Date(bodies[i]?.committedAt ?? 0).toISOString();
    const insert = { UID: job, Name: name, JobStatus: "Queued", Duration: 30 };
    expect(JSON.stringify(bodies[0]?.body)).toBe(
      JSON.stringify([
        {
          data: { schemaJobs: { operation: "INSERT", timestamp: stamp(0), data: insert, previous: insert } },
        },
      ]),
    );
    const updated = { ...insert, JobStatus: "Cancelled" };
    expect(JSON.stringify(bodies[1]?.body)).toBe(
      JSON.stringify([
        {
          data: { schemaJobs: { operation: "UPDATE", timestamp: stamp(1), data: updated, previous: insert } },
        },
      ]),
    );
    expect(JSON.stringify(bodies[2]?.body)).toBe(
      JSON.stringify([
        {
          data: {
            schemaJobs: { operation: "DELETE", timestamp: stamp(2), data: updated, previous: updated },
          },
        },
      ]),
    );
    expect(stamp(0)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  test("a change to a field not selected in data does not fire", async () => {
    const id = await hook(`subscription { schemaJobs { operation data { JobStatus } } }`);
    const { job } = await mutate(
      `mutation { schema { job: insertJobs(input: {Duration: 30, RegionId: "${regionId}"}) } }`,
    );
    await mutate(`mutation { schema { updateJobs(input: {UID: "${job}", Description: "only this"}) } }`);
    await t.feed.processBatch();
    expect(
      (await jobsFor(id)).map(
        (j) =>
          ((j.data.body as unknown[])[0] as { data: { schemaJobs: { operation: string } } }).data.schemaJobs
            .operation,
      ),
    ).toEqual(["INSERT"]);
  });

  test("three matching records of one mutation: one job, three elements in mutation order; a filter drops the rest", async () => {
    const id = await hook(
      `subscription { schemaJobs(filter: "Duration >= 10 AND Region.Name == 'North'", operation: INSERT) { data { Duration } } }`,
    );
    await mutate(`mutation { schema {
      a: insertJobs(input: {Duration: 10, RegionId: "${regionId}"})
      b: insertJobs(input: {Duration: 5, RegionId: "${regionId}"})
      c: insertJobs(input: {Duration: 30, RegionId: "${regionId}"})
      d: insertRegions(input: {Name: "Other", Timezone: "UTC"})
      e: insertJobs(input: {Duration: 20, RegionId: "${regionId}"})
    } }`);
    await t.feed.processBatch();
    const jobs = await jobsFor(id);
    expect(jobs.length).toBe(1);
    expect(jobs[0]?.data.body).toEqual(
      [10, 30, 20].map((Duration) => ({ data: { schemaJobs: { data: { Duration } } } })),
    );
  });

  test("extendedFilter Previous.JobStatus != Current.JobStatus fires on status changes only", async () => {
    const id = await hook(
      `subscription { schemaJobs(operation: UPDATE, extendedFilter: "Previous.JobStatus != Current.JobStatus") { data { JobStatus Description } } }`,
    );
    const { job } = await mutate(
      `mutation { schema { job: insertJobs(input: {Duration: 1, RegionId: "${regionId}"}) } }`,
    );
    await mutate(`mutation { schema { updateJobs(input: {UID: "${job}", Description: "x"}) } }`);
    await mutate(`mutation { schema { updateJobs(input: {UID: "${job}", JobStatus: "Dispatched"}) } }`);
    await t.feed.processBatch();
    expect((await jobsFor(id)).map((j) => j.data.body)).toEqual([
      [{ data: { schemaJobs: { data: { JobStatus: "Dispatched", Description: "x" } } } }],
    ]);
  });

  test("an untracked custom object does not fire; tracked again, it does", async () => {
    const created = await t.call("POST", "/custom/standalone/schemas", {
      token: acme.adminToken,
      body: { name: "Gadget", fields: [{ name: "Code", column: { type: "string" } }] },
    });
    const objectId = created.body.result.schema.id;
    const id = await hook(`subscription { schemaGadget { operation data { Code } } }`);
    await t.call("DELETE", `/custom/standalone/track/${objectId}`, { token: acme.adminToken });
    await mutate(`mutation { schema { insertGadget(input: {Code: "quiet"}) } }`);
    await t.feed.processBatch();
    expect(await jobsFor(id)).toEqual([]);
    await t.call("POST", `/custom/standalone/track/${objectId}`, { token: acme.adminToken });
    await mutate(`mutation { schema { insertGadget(input: {Code: "loud"}) } }`);
    await t.feed.processBatch();
    expect((await jobsFor(id)).map((j) => j.data.body)).toEqual([
      [{ data: { schemaGadget: { operation: "INSERT", data: { Code: "loud" } } } }],
    ]);
  });

  test("deliveries are logged as pending with the job's id", async () => {
    const id = await hook(`subscription { schemaRegions { operation } }`);
    await mutate(`mutation { schema { insertRegions(input: {Name: "Logged", Timezone: "UTC"}) } }`);
    await t.feed.processBatch();
    const [job] = await jobsFor(id);
    const log = await t.call("GET", `/webhooks/${id}/deliveries`, { token: acme.adminToken });
    expect(log.body.result).toEqual([
      expect.objectContaining({
        id: job?.data.deliveryId,
        webhookId: id,
        status: "pending",
        attemptCount: 0,
        attempts: [],
      }),
    ]);
  });

  test("webhook changes made by any process take effect at the next batch", async () => {
    const first = await hook(`subscription { schemaRegions { operation } }`);
    await mutate(`mutation { schema { insertRegions(input: {Name: "Before", Timezone: "UTC"}) } }`);
    await t.feed.processBatch();
    expect(await jobsFor(first)).toHaveLength(1);

    // The dispatcher disables a webhook on 410 Gone through its own connection to the store.
    const dispatcherStore = await openDeliveryStore(storeLocationOf(t.storeEnv));
    await dispatcherStore.disableWebhook(acme.tenant.id, first, "410 Gone", Date.now());
    await dispatcherStore.close();
    await mutate(`mutation { schema { insertRegions(input: {Name: "Disabled", Timezone: "UTC"}) } }`);
    await t.feed.processBatch();
    expect(await jobsFor(first)).toHaveLength(1);

    const second = await hook(`subscription { schemaRegions { operation } }`);
    await mutate(`mutation { schema { insertRegions(input: {Name: "Added", Timezone: "UTC"}) } }`);
    await t.feed.processBatch();
    expect(await jobsFor(second)).toHaveLength(1);

    await t.call("DELETE", `/webhooks/${second}`, { token: acme.adminToken });
    await mutate(`mutation { schema { insertRegions(input: {Name: "Gone", Timezone: "UTC"}) } }`);
    await t.feed.processBatch();
    expect(await jobsFor(second)).toHaveLength(1);
  });

  test("batches read the webhook rows again only after a webhook changed", async () => {
    let listed = 0;
    const app = await createTestApp({}, (store) => ({
      ...store,
      listWebhooks: (tenantId: string) => {
        listed++;
        return store.listWebhooks(tenantId);
      },
    }));
    try {
      const tenant = await app.provision("listing");
      const client = graphqlClient(app, tenant.adminToken);
      const insert = () =>
        client(`mutation { schema { insertRegions(input: {Name: "R", Timezone: "UTC"}) } }`);
      const created = await app.call("POST", "/webhooks", {
        token: tenant.adminToken,
        body: {
          name: "regions",
          url: "https://receiver.example.com/hook",
          type: "graphql",
          query: `subscription { schemaRegions { operation } }`,
        },
      });
      expect(created.status).toBe(201);
      for (let i = 0; i < 3; i++) {
        await insert();
        await app.feed.processBatch();
      }
      const afterThree = listed;
      expect(afterThree).toBeLessThanOrEqual(1);
      await app.call("PUT", `/webhooks/${created.body.result.id}`, {
        token: tenant.adminToken,
        body: {
          name: "regions",
          url: "https://receiver.example.com/other",
          type: "graphql",
          query: `subscription { schemaRegions { operation } }`,
        },
      });
      await insert();
      await app.feed.processBatch();
      expect(listed).toBe(afterThree + 1);
    } finally {
      await app.close();
    }
  });
});
