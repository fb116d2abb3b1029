/**
 * Hardening, document cache growth: a burst of unique documents (mutations with
 * their values inline, the shape of an attack or of a careless client) must not
 * grow the API. Each such document used to stay cached with its graphql-jit
 * compile, ~1.5 MB for a 100-insert mutation, 2,000 of them kept.
 */
import { heapStats } from "bun:jsc";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Principal } from "../../../api/auth/principal.ts";
import { createGraphQLService } from "../../../api/graphql/graphql-service.ts";
import { createReadAnswers } from "../../../api/graphql/queries/read-answers.ts";
import { createTenantSchemas, documentLimits } from "../../../api/graphql/tenant-schemas.ts";
import { createLogger } from "../../../common/log.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../../support/app.ts";
import { graphqlClient } from "../../support/graphql.ts";

const BUDGET = 1024 * 1024;
const MiB = 1024 * 1024;

let t: TestApp;
let acme: ProvisionedTenant;
let principal: Principal;
let regionId = "";

beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: "error" });
  acme = await t.provision("acme");
  principal = await t.auth.authenticate(`Bearer ${acme.adminToken}`);
  const region = await graphqlClient(
    t,
    acme.adminToken,
  )('mutation { schema { insertRegions(input: {Name: "North", Timezone: "Europe/London"}) } }');
  if (!region.data) throw new Error(JSON.stringify(region));
  regionId = (region.data.schema as { insertRegions: string }).insertRegions;
});
afterAll(() => t.close());

/** The app's GraphQL service over the test app's real store and catalogues, with a budget of its own. */
function service(options: { storeReads?: boolean } = {}) {
  const log = createLogger("error");
  const limits = documentLimits(t.config);
  const readJson = t.store.readJson?.bind(t.store);
  const graphql = createGraphQLService(
    t.catalogues,
    createTenantSchemas(t.store, t.config, () => {}),
    limits,
    log,
    {
      documentCacheBytes: BUDGET,
      reads: options.storeReads !== false && readJson ? createReadAnswers(readJson, limits, log) : null,
    },
  );
  const run = async (query: string, variables?: Record<string, unknown>) => {
    const { body } = await graphql.execute(principal, { query, variables });
    const answer = typeof body === "string" ? JSON.parse(body) : body;
    if (answer.errors) throw new Error(JSON.stringify(answer.errors));
    return answer.data;
  };
  return { run, usage: () => graphql.documentCacheUsage() };
}

const oneOffInsert = (n: number, inserts = 1) =>
  `mutation { schema { ${Array.from(
    { length: inserts },
    (_, k) =>
      `a${k}: insertJobs(input: {Duration: ${k + 1}, RegionId: "${regionId}", Description: "one-off ${n}-${k} ${crypto.randomUUID()}"})`,
  ).join(" ")} } }`;

describe("unique documents", () => {
  test("2,000 unique one-off mutations: none kept, no bytes held", async () => {
    const { run, usage } = service();
    for (let n = 0; n < 2000; n++) await run(oneOffInsert(n));
    expect(usage()).toMatchObject({ entries: 0, bytes: 0 });
  });

  test("2,000 unique mutations declaring a variable: the accounted bytes stay within the budget", async () => {
    const { run, usage } = service();
    let most = 0;
    for (let n = 0; n < 2000; n++) {
      await run(
        `mutation($d: String) { schema { a${n}: insertJobs(input: {Duration: 1, RegionId: "${regionId}", Description: $d}) } }`,
        { d: `kept ${n}` },
      );
      most = Math.max(most, usage().bytes);
    }
    expect(most).toBeLessThanOrEqual(BUDGET);
    expect(usage().entries).toBeLessThan(2000);
  });

  test("300 unique one-off queries answered by graphql-jit: none kept", async () => {
    const { run, usage } = service({ storeReads: false });
    for (let n = 0; n < 300; n++) {
      await run(
        `{ jobs(first: 2, filter: "Description == 'q ${n}'") { edges { node { UID Description } } } }`,
      );
    }
    expect(usage()).toMatchObject({ entries: 0, bytes: 0 });
  });

  test.each([
    ["graphql-jit", false],
    ["the store's whole read", true],
  ])(
    "a repeated query with variables is served from the cache (%s), what was made for it counted",
    async (_, storeReads) => {
      const { run, usage } = service({ storeReads });
      const query =
        "query Jobs($f: String) { jobs(first: 2, filter: $f) { edges { node { UID Description Region { Name } } } } }";
      await run(query, { f: "Duration == 1" });
      const first = usage();
      expect(first).toMatchObject({ entries: 1, hits: 0, misses: 1 });
      for (let i = 0; i < 5; i++) await run(query, { f: "Duration == 1" });
      expect(usage()).toMatchObject({ entries: 1, hits: 5, misses: 1, bytes: first.bytes });
      // The bytes of the compiled operation or read plan count beside the document's.
      expect(first.bytes).toBeGreaterThan(query.length * 32 + 6144);
    },
  );

  test("a query without variables is kept on its second sighting, then served from the cache", async () => {
    const { run, usage } = service();
    const query = "{ jobs(first: 1) { edges { node { UID } } } }";
    for (let i = 0; i < 4; i++) await run(query);
    expect(usage()).toMatchObject({ entries: 1, hits: 2, misses: 2 });
  });
});

describe("memory", () => {
  const measure = () => {
    Bun.gc(true);
    return { heap: heapStats().heapSize, rss: process.memoryUsage().rss };
  };

  test("200 unique 100-insert one-off mutations over HTTP: heap grows < 40 MiB, resident memory < 150 MiB", async () => {
    const gql = graphqlClient(t, acme.adminToken);
    for (let n = 0; n < 20; n++) await gql(oneOffInsert(-n - 1, 100));
    const before = measure();
    for (let n = 0; n < 200; n++) {
      const answer = await gql(oneOffInsert(n, 100));
      expect(answer.errors).toBeUndefined();
    }
    const after = measure();
    expect(after.heap - before.heap).toBeLessThan(40 * MiB);
    expect(after.rss - before.rss).toBeLessThan(150 * MiB);
  }, 60_000);
});
