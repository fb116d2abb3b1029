/**
 * The change feed's lag as the metrics read it: the entries after the tailer's position and the
 * age of the first, 0 and 0 once caught up. Real store and Redis; the consumer is the test's own.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createLease } from "../../api/feed/feed-lease.ts";
import { createFeedTailer } from "../../api/feed/feed-tailer.ts";
import { createLogger } from "../../common/log.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { partitionOf } from "../support/change-log.ts";
import { graphqlClient } from "../support/graphql.ts";

let t: TestApp;
let acme: ProvisionedTenant;
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.provision("acme");
});
afterAll(() => t.close());

test("lag: entries behind and the first one's age; none once every consumer took them", async () => {
  const tailer = createFeedTailer({
    store: t.store,
    partition: partitionOf(t.store, acme.tenant.id),
    lease: createLease(t.redis.redis, `${t.redis.prefix}:lag-lease`, 5000),
    consumers: [{ name: "noop", consume: async () => undefined }],
    log: createLogger("silent"),
    name: "lag-test",
  });
  await tailer.processBatch();
  expect(await tailer.lag()).toEqual({ changes: 0, seconds: 0 });

  const before = Date.now();
  const gql = graphqlClient(t, acme.adminToken);
  await gql(
    'mutation { schema { a: insertRegions(input: {Name: "A", Timezone: "UTC"}) b: insertRegions(input: {Name: "B", Timezone: "UTC"}) } }',
  );
  await gql('mutation { schema { insertRegions(input: {Name: "C", Timezone: "UTC"}) } }');
  await Bun.sleep(50);
  const behind = await tailer.lag();
  expect(behind.changes).toBe(3);
  expect(behind.seconds).toBeGreaterThanOrEqual(0.05);
  expect(behind.seconds).toBeLessThanOrEqual((Date.now() - before) / 1000 + 0.01);

  await tailer.processBatch();
  expect(await tailer.lag()).toEqual({ changes: 0, seconds: 0 });
});
