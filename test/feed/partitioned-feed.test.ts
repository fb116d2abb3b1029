/**
 * The partitioned change feed of two API runtimes on one store and one Redis (as two processes
 * would run them): the partitions spread over both (each reads some, none is read by both, as the
 * Redis lease keys and each feed's own account agree), mutations sent through either reach their
 * webhooks once each, and a feed that stops hands its partitions to the other at once.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { shareOf } from "../../api/feed/partition-assignment.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { eventually } from "../support/eventually.ts";
import { graphqlClient } from "../support/graphql.ts";
import { queuedJobs } from "../support/queue.ts";

const SETTINGS = { FEED_LEASE_MS: "1000", FEED_POLL_MS: "50" };

let a: TestApp;
let b: TestApp;
const tenants: ProvisionedTenant[] = [];

beforeAll(async () => {
  a = await createTestApp(SETTINGS);
  b = await createTestApp({ ...SETTINGS, ...a.storeEnv, REDIS_PREFIX: a.redis.prefix });
  for (let i = 0; i < 12; i++) {
    const tenant = await a.provision(`spread-${i}`);
    const created = await a.call("POST", "/webhooks", {
      token: tenant.adminToken,
      body: {
        name: "regions",
        url: "https://receiver.example.com/hook",
        type: "graphql",
        query: "subscription { schemaRegions { operation data { Name } } }",
      },
    });
    expect(created.status).toBe(201);
    tenants.push(tenant);
  }
}, 60_000);
afterAll(async () => {
  await b?.close();
  await a?.close();
});

/** Each partition's lease holder, as Redis has it. */
const leaseHolders = async () => {
  const partitions = a.store.feedPartitions();
  return a.redis.redis.mget(...Array.from({ length: partitions }, (_, p) => a.redis.keys.feedLease(p)));
};

const insertRegion = (app: TestApp, tenant: ProvisionedTenant, name: string) =>
  graphqlClient(
    app,
    tenant.adminToken,
  )(`mutation { schema { insertRegions(input: {Name: "${name}", Timezone: "UTC"}) } }`);

/** The jobs queued for `name`'s inserts: one per tenant's webhook, each once. */
const jobsOf = async (name: string) =>
  (await queuedJobs(a.redis)).filter((job) =>
    (job.data.body as { data: { schemaRegions: { data: { Name: string } } } }[]).some(
      (element) => element.data.schemaRegions.data.Name === name,
    ),
  );

test("two feeds on one store share the partitions, each mutation's webhook job comes once, and a stopping feed hands its partitions over", async () => {
  const partitions = a.store.feedPartitions();
  const all = [...Array(partitions).keys()];
  a.feed.start();
  await eventually(() => expect(a.feed.held()).toEqual(all));

  b.feed.start();
  const share = shareOf(partitions, 2);
  await eventually(
    async () => {
      const [held, other] = [a.feed.held(), b.feed.held()];
      expect([...held, ...other].toSorted((x, y) => x - y)).toEqual(all);
      expect(held.length).toBeLessThanOrEqual(share);
      expect(other.length).toBeLessThanOrEqual(share);
      // What each feed says it reads is what Redis says it holds.
      const holders = await leaseHolders();
      expect(holders).toEqual(all.map((p) => (held.includes(p) ? a.feed.self : b.feed.self)));
    },
    { timeoutMs: 10_000 },
  );
  // With two partitions or more, each process reads some (SQLite has one: one process reads it).
  if (partitions >= 2) expect(Math.min(a.feed.held().length, b.feed.held().length)).toBeGreaterThan(0);

  // Mutations through both APIs, for tenants all over the partitions: each webhook's job once.
  for (const [i, tenant] of tenants.entries())
    expect((await insertRegion(i % 2 === 0 ? a : b, tenant, "spread")).errors).toBeUndefined();
  await eventually(async () => expect(await jobsOf("spread")).toHaveLength(tenants.length), {
    timeoutMs: 10_000,
  });
  expect(new Set((await jobsOf("spread")).map((job) => job.data.tenantId)).size).toBe(tenants.length);

  // B stops: its partitions are released at once, A takes them at its next rounds (well within a lease).
  const stoppedAt = Date.now();
  await b.feed.stop();
  await eventually(() => expect(a.feed.held()).toEqual(all), { timeoutMs: 5000, intervalMs: 10 });
  expect(Date.now() - stoppedAt).toBeLessThan(1000);
  expect(new Set(await leaseHolders())).toEqual(new Set([a.feed.self]));
  for (const tenant of tenants) expect((await insertRegion(b, tenant, "after")).errors).toBeUndefined();
  await eventually(async () => expect(await jobsOf("after")).toHaveLength(tenants.length), {
    timeoutMs: 10_000,
  });
  expect(await jobsOf("spread")).toHaveLength(tenants.length);
}, 60_000);

test("a lease lost to another holder stops that partition's reading at the next round; taken again once it lapses", async () => {
  const t = await createTestApp({ FEED_LEASE_MS: "1000", FEED_POLL_MS: "50" });
  try {
    const partitions = t.store.feedPartitions();
    const all = [...Array(partitions).keys()];
    t.feed.start();
    await eventually(() => expect(t.feed.held()).toEqual(all));
    // Another holder has partition 0 now (as after this process stalled past its lease): for 1.5 s.
    await t.redis.redis.set(t.redis.keys.feedLease(0), "elsewhere:1:intruder", "PX", 1500);
    const lostAt = Date.now();
    await eventually(() => expect(t.feed.held()).toEqual(all.slice(1)), { timeoutMs: 2000, intervalMs: 10 });
    // Not taken while the other holds it (its holder is not a live process, but its lease still runs).
    expect(Date.now() - lostAt).toBeLessThan(1000);
    expect(await t.redis.redis.get(t.redis.keys.feedLease(0))).toBe("elsewhere:1:intruder");
    await eventually(() => expect(t.feed.held()).toEqual(all), { timeoutMs: 3000, intervalMs: 10 });
    expect(Date.now() - lostAt).toBeGreaterThanOrEqual(1400);
    expect(await t.redis.redis.get(t.redis.keys.feedLease(0))).toBe(t.feed.self);
  } finally {
    await t.close();
  }
}, 30_000);
