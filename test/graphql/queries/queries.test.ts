import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { GraphQLClient } from "graphql-request";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../../support/app.ts";
import { countingStore } from "../../support/counting-store.ts";
import { graphqlClient } from "../../support/graphql.ts";

// Every test runs twice: answers read whole by the store, and answers resolved field by field
// (what the store cannot read whole, and every store without readJson, goes that way).
for (const storeReads of [true, false]) {
  describe(storeReads ? "answers read whole by the store" : "answers resolved field by field", () => {
    let t: TestApp;
    let acme: ProvisionedTenant;
    let gql: ReturnType<typeof graphqlClient>;
    let counter: ReturnType<typeof countingStore>;
    const regions: string[] = [];
    const JOBS = 60;

    type Edge = { cursor: string; offset: number; node: Record<string, unknown> };
    type Connection = { edges: Edge[]; pageInfo: Record<string, unknown>; totalCount?: number };
    const conn = (data: unknown, field = "jobs") => (data as Record<string, Connection>)[field] as Connection;

    beforeAll(async () => {
      t = await createTestApp({ GRAPHQL_STORE_READS: String(storeReads) }, (store) => {
        counter = countingStore(store);
        return counter.store;
      });
      acme = await t.provision("acme");
      gql = graphqlClient(t, acme.adminToken);
      const setup = await gql(
        `mutation { schema {
    n: insertRegions(input: {Name: "North", Timezone: "UTC"})
    s: insertRegions(input: {Name: "South", Timezone: "UTC"})
    v1: insertResources(input: {Name: "Van 1", PrimaryRegionId: "n"}, idAlias: "v1")
  } }`.replace(/RegionId: "n"/, 'RegionId: "REGION"'),
      );
      expect(setup.errors?.[0]?.extensions.code).toBe("UNKNOWN_ID_ALIAS");
      const created = await gql(`mutation { schema {
    n: insertRegions(input: {Name: "North", Timezone: "UTC"}, idAlias: "n")
    s: insertRegions(input: {Name: "South", Timezone: "UTC"}, idAlias: "s")
    v: insertResources(input: {Name: "Van 1", PrimaryRegionId: "n"}, idAlias: "v")
  } }`);
      const ids = created.data?.schema as Record<string, string>;
      regions.push(ids.n as string, ids.s as string);
      const ops = Array.from({ length: JOBS }, (_, i) => {
        const region = i % 3 === 0 ? ids.s : ids.n;
        const start =
          i % 5 === 0 ? "" : `, Start: "2024-05-${String((i % 28) + 1).padStart(2, "0")}T10:00:00Z"`;
        return `j${i}: insertJobs(input: {Duration: ${i}, RegionId: "${region}", Description: "job ${String(i).padStart(2, "0")}"${start}}, idAlias: "j${i}")
      a${i}: insertJobAllocations(input: {JobId: "j${i}", ResourceId: "${ids.v}"})`;
      });
      // Two mutations: one would exceed the 100-alias limit.
      for (const half of [ops.slice(0, JOBS / 2), ops.slice(JOBS / 2)]) {
        const jobs = await gql(`mutation { schema { ${half.join("\n")} } }`);
        expect(jobs.errors).toBeUndefined();
      }
    });
    afterAll(() => t.close());

    describe("list fields", () => {
      test("default order is UID, first defaults to 200, totalCount counts the filter", async () => {
        const all = await gql(
          `{ jobs { totalCount edges { offset node { UID } } pageInfo { hasNextPage hasPreviousPage } } }`,
        );
        const jobs = conn(all.data);
        expect(jobs.totalCount).toBe(JOBS);
        expect(jobs.edges.length).toBe(JOBS);
        const uids = jobs.edges.map((e) => e.node.UID as string);
        expect(uids).toEqual([...uids].sort());
        expect(jobs.edges.map((e) => e.offset)).toEqual(uids.map((_, i) => i));
        expect(jobs.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: false });

        const filtered = await gql(
          `{ jobs(filter: "Region.Name == 'South' AND Duration >= 30") { totalCount edges { node { Duration } } } }`,
        );
        const south = conn(filtered.data);
        const expected = Array.from({ length: JOBS }, (_, i) => i).filter((i) => i % 3 === 0 && i >= 30);
        expect(south.totalCount).toBe(expected.length);
        expect(south.edges.map((e) => e.node.Duration).sort((a, b) => Number(a) - Number(b))).toEqual(
          expected,
        );
      });

      test("orderBy with directions, nulls and lookup paths; UID breaks ties", async () => {
        const result = await gql(
          `{ jobs(orderBy: "Region.Name DESC, Start ASC", first: 200) { edges { node { UID Start Region { Name } } } } }`,
        );
        const nodes = conn(result.data).edges.map((e) => e.node);
        const key = (n: Record<string, unknown>) =>
          [(n.Region as { Name: string }).Name, n.Start as string | null, n.UID as string] as const;
        const sorted = [...nodes].sort((a, b) => {
          const [ra, sa, ua] = key(a);
          const [rb, sb, ub] = key(b);
          if (ra !== rb) return ra < rb ? 1 : -1;
          if (sa !== sb) return sa === null ? -1 : sb === null ? 1 : sa < sb ? -1 : 1;
          return ua < ub ? -1 : 1;
        });
        expect(nodes).toEqual(sorted);
        expect(nodes[0]?.Start).toBeNull();
      });

      test("first, offset and after walk the same order page by page", async () => {
        const whole = conn(
          (await gql(`{ jobs(orderBy: "Description DESC") { edges { node { Description } } } }`)).data,
        ).edges.map((e) => e.node.Description);
        const seen: unknown[] = [];
        let after: string | null = null;
        for (;;) {
          const page: Connection = conn(
            (
              await gql(
                `query($after: String) { jobs(orderBy: "Description DESC", first: 7, after: $after) { edges { node { Description } } pageInfo { hasNextPage endCursor } } }`,
                { after },
              )
            ).data,
          );
          seen.push(...page.edges.map((e) => e.node.Description));
          if (!page.pageInfo.hasNextPage) break;
          after = page.pageInfo.endCursor as string;
        }
        expect(seen).toEqual(whole);
        const skipped = conn(
          (
            await gql(
              `{ jobs(orderBy: "Description DESC", first: 3, offset: 10) { edges { offset node { Description } } } }`,
            )
          ).data,
        );
        expect(skipped.edges.map((e) => e.node.Description)).toEqual(whole.slice(10, 13));
        expect(skipped.edges.map((e) => e.offset)).toEqual([10, 11, 12]);
      });

      test("pagination under concurrent inserts and deletes skips and repeats nothing that stayed", async () => {
        const before = conn((await gql(`{ jobs(first: 200) { edges { node { UID } } } }`)).data).edges.map(
          (e) => e.node.UID as string,
        );
        const seen: string[] = [];
        let after: string | null = null;
        let round = 0;
        const deleted = new Set<string>();
        for (;;) {
          const page: Connection = conn(
            (
              await gql(
                `query($after: String) { jobs(first: 5, after: $after) { edges { node { UID } } pageInfo { hasNextPage endCursor } } }`,
                { after },
              )
            ).data,
          );
          seen.push(...page.edges.map((e) => e.node.UID as string));
          // Others write between our pages: new jobs land anywhere in UID order, an unseen job disappears.
          await gql(
            `mutation { schema { insertJobs(input: {Duration: 1, RegionId: "${regions[0]}", Description: "late ${round}"}) } }`,
          );
          const victim = before.find((uid) => !seen.includes(uid) && !deleted.has(uid));
          if (victim && round % 3 === 0) {
            const a = await gql(`{ jobsById(UID: "${victim}") { JobAllocations { UID } } }`);
            const allocations = (
              a.data as { jobsById: { JobAllocations: { UID: string }[] } }
            ).jobsById.JobAllocations.map((x) => `deleteJobAllocations(UID: "${x.UID}")`);
            const removed = await gql(
              `mutation { schema { ${allocations.map((op, i) => `d${i}: ${op}`).join(" ")} job: deleteJobs(UID: "${victim}") } }`,
            );
            expect(removed.errors).toBeUndefined();
            deleted.add(victim);
          }
          round++;
          if (!page.pageInfo.hasNextPage) break;
          after = page.pageInfo.endCursor as string;
        }
        expect(new Set(seen).size).toBe(seen.length);
        for (const uid of before) if (!deleted.has(uid)) expect(seen).toContain(uid);
        expect(deleted.size).toBeGreaterThan(0);
      });

      test("xById answers the record or null", async () => {
        const uid = conn((await gql(`{ jobs(first: 1) { edges { node { UID } } } }`)).data).edges[0]?.node
          .UID as string;
        const found = await gql(
          `{ jobsById(UID: "${uid}") { UID Name } missing: jobsById(UID: "${crypto.randomUUID()}") { UID } }`,
        );
        expect(found.data).toEqual({
          jobsById: { UID: uid, Name: expect.stringMatching(/^JOB-/) },
          missing: null,
        });
      });
    });

    describe("relations", () => {
      test("three levels deep, batched: store queries do not grow with rows", async () => {
        const deep = (first: number) =>
          `{ jobs(first: ${first}, orderBy: "Description") { edges { node { Description Region { Name Resources { Name } } JobAllocations { Name Resource { Name PrimaryRegion { Name } } } } } } }`;
        counter.reset();
        const small = await gql(deep(2));
        const smallReads = counter.reads();
        counter.reset();
        const large = await gql(deep(50));
        const largeReads = counter.reads();
        expect(small.errors).toBeUndefined();
        expect(large.errors).toBeUndefined();
        expect(largeReads).toBe(smallReads);
        // Read whole by the store, the answer is one statement; resolved, at most one per field per level.
        expect(largeReads).toBeLessThanOrEqual(storeReads ? 1 : 7);
        expect(largeReads).toBeGreaterThan(0);
        type Deep = {
          JobAllocations: { Resource: unknown }[];
          Region: { Name: string; Resources: unknown[] };
        };
        const nodes = conn(large.data).edges.map((e) => e.node as unknown as Deep);
        expect(nodes[0]?.JobAllocations[0]?.Resource).toEqual({
          Name: "Van 1",
          PrimaryRegion: { Name: "North" },
        });
        expect(nodes.find((n) => n.Region.Name === "North")?.Region.Resources).toEqual([{ Name: "Van 1" }]);
        expect(nodes.find((n) => n.Region.Name === "South")?.Region.Resources).toEqual([]);
      });

      test("fields reached through fragments, inline fragments and aliases are all read", async () => {
        const plain = await gql(
          `{ jobs(first: 5, orderBy: "Description") { edges { node { Description Duration RegionId Region { Name Timezone } JobAllocations { Name ResourceId } } } } }`,
        );
        const spread = await gql(`
      fragment Zone on Regions { Timezone }
      fragment Job on Jobs { d: Description ... on Jobs { Duration } }
      { jobs(first: 5, orderBy: "Description") { edges { ... on JobsEdge { node { ...Job RegionId
        north: Region { Name } zone: Region { ...Zone } JobAllocations { ... { Name } ResourceId } } } } } }`);
        expect(plain.errors).toBeUndefined();
        expect(spread.errors).toBeUndefined();
        type Node = Record<string, unknown> & { north: { Name: string }; zone: { Timezone: string } };
        const reshaped = conn(spread.data).edges.map(({ node }) => {
          const { d, north, zone, ...rest } = node as Node;
          return { node: { Description: d, ...rest, Region: { ...north, ...zone } } };
        });
        expect(reshaped).toEqual(conn(plain.data).edges as never);
        expect(conn(plain.data).edges[0]?.node).toMatchObject({
          Description: "job 00",
          Duration: 0,
          Region: { Name: "South", Timezone: "UTC" },
          JobAllocations: [{ Name: expect.stringMatching(/^JA-/), ResourceId: expect.any(String) }],
        });
      });

      test("a lookup read with its list is null when the reference is empty, and the same record otherwise", async () => {
        const inserted = await gql(`mutation { schema {
      acme: insertAccounts(input: {Name: "Acme"}, idAlias: "acme")
      a: insertJobs(input: {Duration: 1000, RegionId: "${regions[1]}", AccountId: "acme"})
      b: insertJobs(input: {Duration: 1001, RegionId: "${regions[1]}"}) } }`);
        expect(inserted.errors).toBeUndefined();
        const { acme, a, b } = (inserted.data as { schema: Record<string, string> }).schema;
        const listed = await gql(
          `{ jobs(filter: "Duration >= 1000", orderBy: "Duration") { edges { node { Duration AccountId Account { UID Name } Region { Name } } } } }`,
        );
        expect(conn(listed.data).edges.map(({ node }) => node)).toEqual([
          {
            Duration: 1000,
            AccountId: acme,
            Account: { UID: acme, Name: "Acme" },
            Region: { Name: "South" },
          },
          { Duration: 1001, AccountId: null, Account: null, Region: { Name: "South" } },
        ]);
        const removed = await gql(
          `mutation { schema { a: deleteJobs(UID: "${a}") b: deleteJobs(UID: "${b}") acme: deleteAccounts(UID: "${acme}") } }`,
        );
        expect(removed.errors).toBeUndefined();
      });

      test("each parent gets its own first `limit` children, however the children fall across parents", async () => {
        // North has ~40 jobs, South ~20: with limit 30 all children fit parents × limit, with 15 they do not.
        for (const limit of [0, 15, 30, 45]) {
          const batched = await gql(
            `{ regions(orderBy: "Name") { edges { node { UID Jobs(orderBy: "Duration DESC", limit: ${limit}) { Duration } } } } }`,
          );
          expect(batched.errors).toBeUndefined();
          const parents = conn(batched.data, "regions").edges;
          expect(parents).toHaveLength(2);
          for (const { node } of parents) {
            // The same children through the list field, one region at a time.
            const alone = await gql(
              `{ jobs(filter: "RegionId == '${node.UID}'", orderBy: "Duration DESC", first: ${limit}) { totalCount edges { node { Duration } } } }`,
            );
            expect(node.Jobs).toEqual(conn(alone.data).edges.map((edge) => edge.node));
            const total = conn(alone.data).totalCount as number;
            expect(total).toBeGreaterThan(15);
            expect((node.Jobs as unknown[]).length).toBe(Math.min(limit, total));
          }
        }
      });

      test("reverse lists take filter, orderBy and limit", async () => {
        const result = await gql(
          `{ regionsById(UID: "${regions[0]}") { Jobs(filter: "Duration < 20", orderBy: "Duration DESC", limit: 3) { Duration } } }`,
        );
        expect(
          (result.data as { regionsById: { Jobs: { Duration: number }[] } }).regionsById.Jobs.map(
            (j) => j.Duration,
          ),
        ).toEqual([19, 17, 16]);
      });
    });

    describe("errors and limits", () => {
      const codeOf = async (query: string) => (await gql(query)).errors?.[0]?.extensions;

      test("a bad filter is FILTER_PARSE_ERROR with its position; an unknown field lists the valid ones", async () => {
        expect(await codeOf(`{ jobs(filter: "Duration >") { totalCount } }`)).toMatchObject({
          code: "FILTER_PARSE_ERROR",
          position: { offset: 10, line: 1, column: 11 },
        });
        const unknown = await codeOf(`{ jobs(filter: "Durration > 3") { totalCount } }`);
        expect(unknown).toMatchObject({ code: "UNKNOWN_FIELD", suggestion: "Duration" });
        expect(unknown?.validFields).toContain("JobStatus");
      });

      test("a bad orderBy is FILTER_PARSE_ERROR with its position", async () => {
        expect(await codeOf(`{ jobs(orderBy: "Start DESC Name") { totalCount } }`)).toMatchObject({
          code: "FILTER_PARSE_ERROR",
          position: { column: 12 },
        });
        expect(await codeOf(`{ jobs(orderBy: "Region.Nme") { totalCount } }`)).toMatchObject({
          code: "UNKNOWN_FIELD",
          suggestion: "Name",
        });
      });

      test("page size, depth, cost and aliases each have their own LIMIT_EXCEEDED", async () => {
        expect(await codeOf(`{ jobs(first: 201) { totalCount } }`)).toMatchObject({ code: "LIMIT_EXCEEDED" });
        const uid = conn((await gql(`{ jobs(first: 1) { edges { node { UID } } } }`)).data).edges[0]?.node
          .UID;
        expect(
          await codeOf(`{ jobsById(UID: "${uid}") { JobAllocations(limit: 2001) { Name } } }`),
        ).toMatchObject({ code: "LIMIT_EXCEEDED" });
        const deep = `{ usersById(UID: "x") { CreatedBy { CreatedBy { CreatedBy { CreatedBy { CreatedBy { CreatedBy { CreatedBy { CreatedBy { CreatedBy { CreatedBy { CreatedBy { CreatedBy { UID } } } } } } } } } } } } } }`;
        expect((await gql(deep)).errors?.[0]?.message).toContain("levels deep");
        const costly = `{ jobs { edges { node { JobAllocations(limit: 2000) { Job { JobAllocations(limit: 2000) { Name } } } } } } }`;
        expect((await gql(costly)).errors?.[0]?.message).toContain("could read");
        const aliases = `{ ${Array.from({ length: 101 }, (_, i) => `a${i}: jobsById(UID: "x") { UID }`).join(" ")} }`;
        expect((await gql(aliases)).errors?.[0]?.message).toContain("aliases");
        expect((await gql(aliases)).errors?.[0]?.extensions.code).toBe("LIMIT_EXCEEDED");
      });

      test("a cursor from another order is refused", async () => {
        const cursor = conn(
          (await gql(`{ jobs(first: 1) { pageInfo { endCursor } edges { cursor } } }`)).data,
        ).pageInfo.endCursor;
        expect(
          await codeOf(`{ jobs(orderBy: "Duration", after: "${cursor}") { totalCount } }`),
        ).toMatchObject({
          code: "VALIDATION_FAILED",
        });
      });
    });

    describe("over real HTTP", () => {
      test("graphql-request queries the service unchanged; GET serves queries and refuses mutations", async () => {
        const server = t.app.listen({ port: 0, hostname: "127.0.0.1" });
        const url = `http://127.0.0.1:${server.server?.port}/graphql/graphql`;
        try {
          const client = new GraphQLClient(url, { headers: { authorization: `Bearer ${acme.adminToken}` } });
          const data = await client.request<{ jobs: Connection }>(
            `query Jobs($f: String) { jobs(filter: $f, first: 2) { totalCount edges { node { Name } } } }`,
            { f: "Description LIKE 'job 0%'" },
          );
          const direct = conn(
            (await gql(`{ jobs(filter: "Description LIKE 'job 0%'") { totalCount } }`)).data,
          );
          expect(data.jobs.totalCount).toBe(direct.totalCount as number);
          expect(data.jobs.totalCount).toBeGreaterThan(5);

          expect(data.jobs.edges.length).toBe(2);

          const get = await fetch(`${url}?query=${encodeURIComponent("{ regions { totalCount } }")}`, {
            headers: { authorization: `Bearer ${acme.adminToken}` },
          });
          expect(await get.json()).toEqual({ data: { regions: { totalCount: 2 } } });
          const mutation = await fetch(
            `${url}?query=${encodeURIComponent('mutation { schema { insertAccounts(input: {Name: "x"}) } }')}`,
            {
              headers: { authorization: `Bearer ${acme.adminToken}` },
            },
          );
          expect(mutation.status).toBe(405);
        } finally {
          await server.stop(true);
        }
      });
    });
  });
}
