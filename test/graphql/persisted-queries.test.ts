/**
 * Automatic persisted queries and batched requests: the store's bounds (bytes per tenant and in
 * all, least recently used first out), the protocol over POST and GET, the hardening (a hash must
 * be the SHA-256 of the text stored under it; tenants never see each other's), batches (bounded,
 * answered in order, counted against the rate limits per operation), and Apollo Client's own links
 * (PersistedQueryLink + HttpLink, BatchHttpLink) against the real HTTP server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApolloClient, ApolloLink, gql, InMemoryCache } from "@apollo/client";
import { BatchHttpLink } from "@apollo/client/link/batch-http";
import { HttpLink } from "@apollo/client/link/http";
import { PersistedQueryLink } from "@apollo/client/link/persisted-queries";
import { createPersistedQueryStore, sha256Hex } from "../../api/graphql/persisted-queries.ts";
import { serverOptions } from "../../api/http/server-options.ts";
import { createTestApp, type TestApp } from "../support/app.ts";

const OVERHEAD = 160;

describe("the persisted-query store", () => {
  test("each tenant is held to its bytes, least recently used first out", () => {
    const store = createPersistedQueryStore({ tenantBytes: 3 * (OVERHEAD + 10), totalBytes: 1_000_000 });
    for (const name of ["a", "b", "c"]) store.set("t1", name, name.repeat(10));
    expect(store.get("t1", "a")).toBe("aaaaaaaaaa"); // a is now the most recently used
    store.set("t1", "d", "d".repeat(10));
    expect(store.get("t1", "b")).toBeUndefined();
    expect(store.get("t1", "a")).toBe("aaaaaaaaaa");
    expect(store.bytes("t1")).toBeLessThanOrEqual(3 * (OVERHEAD + 10));
  });

  test("all tenants together are held to the total, and a busy tenant cannot push past its share", () => {
    const store = createPersistedQueryStore({ tenantBytes: 2_000, totalBytes: 5_000 });
    for (let i = 0; i < 1_000; i++) store.set(`tenant-${i % 7}`, `h${i}`, "x".repeat(300));
    expect(store.bytes()).toBeLessThanOrEqual(5_000);
    for (let i = 0; i < 7; i++) expect(store.bytes(`tenant-${i}`)).toBeLessThanOrEqual(2_000);
  });

  test("a query larger than a tenant's share is not kept", () => {
    const store = createPersistedQueryStore({ tenantBytes: 1_000, totalBytes: 10_000 });
    store.set("t", "big", "x".repeat(1_000));
    expect(store.get("t", "big")).toBeUndefined();
    expect(store.bytes()).toBe(0);
  });
});

describe("persisted queries and batches over HTTP", () => {
  let t: TestApp;
  let token = "";
  let otherToken = "";
  const query = "{ jobs(first: 1) { totalCount } }";
  const hash = sha256Hex(query);
  const persisted = (sha256Hash: string) => ({ persistedQuery: { version: 1, sha256Hash } });

  beforeAll(async () => {
    t = await createTestApp({
      GRAPHQL_MAX_BATCH: "4",
      RATE_LIMIT_TOKEN_PER_SECOND: "0.001",
      RATE_LIMIT_TOKEN_BURST: "30",
    });
    token = (await t.provision("apq")).adminToken;
    otherToken = (await t.provision("apq-other")).adminToken;
  });
  afterAll(() => t.close());

  const post = (body: unknown, as = token) => t.call("POST", "/graphql/graphql", { token: as, body });

  test("unknown hash: PersistedQueryNotFound; with the text: runs and keeps it; then the hash alone runs, over POST and GET", async () => {
    const unknown = await post({ extensions: persisted(hash) });
    expect(unknown.status).toBe(200);
    expect(unknown.body.errors).toEqual([
      { message: "PersistedQueryNotFound", extensions: { code: "PERSISTED_QUERY_NOT_FOUND" } },
    ]);
    const registered = await post({ query, extensions: persisted(hash) });
    expect(registered.body).toEqual({ data: { jobs: { totalCount: 0 } } });
    expect((await post({ extensions: persisted(hash) })).body).toEqual({ data: { jobs: { totalCount: 0 } } });
    const extensions = encodeURIComponent(JSON.stringify(persisted(hash)));
    const viaGet = await t.call("GET", `/graphql/graphql?extensions=${extensions}`, { token });
    expect(viaGet.body).toEqual({ data: { jobs: { totalCount: 0 } } });
  });

  test("a hash that is not the text's SHA-256 is refused (400) and nothing is kept under it", async () => {
    const planted = "{ users { edges { node { Email } } } }";
    const victimHash = sha256Hex("{ regions { totalCount } }");
    const answer = await post({ query: planted, extensions: persisted(victimHash) });
    expect(answer.status).toBe(400);
    expect(answer.body.details).toEqual([
      { path: "extensions.persistedQuery.sha256Hash", message: "is not the SHA-256 of the query sent" },
    ]);
    const later = await post({ extensions: persisted(victimHash) });
    expect(later.body.errors[0].extensions.code).toBe("PERSISTED_QUERY_NOT_FOUND");
  });

  test("another tenant cannot run a hash this tenant registered", async () => {
    const answer = await post({ extensions: persisted(hash) }, otherToken);
    expect(answer.body.errors[0].extensions.code).toBe("PERSISTED_QUERY_NOT_FOUND");
  });

  test("a malformed persistedQuery is a 400 naming the member", async () => {
    const version = await post({ extensions: { persistedQuery: { version: 2, sha256Hash: hash } } });
    expect(version.status).toBe(400);
    expect(version.body.details[0].path).toBe("extensions.persistedQuery.version");
    const shortHash = await post({ extensions: persisted("abc") });
    expect(shortHash.body.details[0].path).toBe("extensions.persistedQuery.sha256Hash");
  });

  test("a batch is answered in order, one answer per operation, and each counts against the rate limit", async () => {
    const before = Number((await post({ query: "{ __typename }" })).headers.get("ratelimit-remaining"));
    const answer = await post([
      { query: "{ __typename }" },
      { query: "{ nope }" },
      { query, extensions: persisted(hash) },
    ]);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual([
      { data: { __typename: "Query" } },
      { errors: [expect.objectContaining({ extensions: { code: "GRAPHQL_VALIDATION_FAILED" } })] },
      { data: { jobs: { totalCount: 0 } } },
    ]);
    expect(Number(answer.headers.get("ratelimit-remaining"))).toBe(before - 3);
  });

  test("a batch over GRAPHQL_MAX_BATCH is refused whole (400 limit_exceeded), none of it runs", async () => {
    const inserts = Array.from({ length: 5 }, () => ({
      query: 'mutation { schema { insertRegions(input: {Name: "R", Timezone: "UTC"}) } }',
    }));
    const answer = await post(inserts);
    expect(answer.status).toBe(400);
    expect(answer.body.errorType).toBe("limit_exceeded");
    const count = await post({ query: "{ regions { totalCount } }" });
    expect(count.body.data.regions.totalCount).toBe(0);
  });

  test("an empty batch, or one with a bad member, is refused before anything runs", async () => {
    expect((await post([])).status).toBe(400);
    const bad = await post([
      { query: 'mutation { schema { insertRegions(input: {Name: "R", Timezone: "UTC"}) } }' },
      { query: 42 },
    ]);
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual([{ path: "[1].query", message: "a non-empty string is required" }]);
    const count = await post({ query: "{ regions { totalCount } }" });
    expect(count.body.data.regions.totalCount).toBe(0);
  });

  test("a batch larger than the token's remaining budget is refused with 429 and Retry-After", async () => {
    let remaining = Number((await post({ query: "{ __typename }" })).headers.get("ratelimit-remaining"));
    while (remaining > 2) {
      remaining = Number((await post({ query: "{ __typename }" })).headers.get("ratelimit-remaining"));
    }
    const answer = await post([
      { query: "{ __typename }" },
      { query: "{ __typename }" },
      { query: "{ __typename }" },
      { query: "{ __typename }" },
    ]);
    expect(answer.status).toBe(429);
    expect(answer.headers.get("retry-after")).not.toBeNull();
  });
});

describe("Apollo Client's links against the real server", () => {
  let t: TestApp;
  let uri = "";
  let token = "";
  const sent: { method: string; body: string | null; url: string }[] = [];
  const record = async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input instanceof Request ? input.url : input);
    sent.push({
      method: init?.method ?? "GET",
      body: typeof init?.body === "string" ? init.body : null,
      url,
    });
    return fetch(input, init);
  };
  const recordingFetch = Object.assign(record, { preconnect: fetch.preconnect });

  beforeAll(async () => {
    t = await createTestApp();
    t.app.listen(serverOptions({ ...t.config, PORT: 0, HOST: "127.0.0.1" }));
    uri = `http://127.0.0.1:${t.app.server?.port}/graphql/graphql`;
    token = (await t.provision("apollo")).adminToken;
  });
  afterAll(async () => {
    await t.app.stop(true);
    await t.close();
  });

  const headers = () => ({ authorization: `Bearer ${token}` });
  const sha256 = (text: string) => sha256Hex(text);
  const client = (link: ApolloLink) => new ApolloClient({ link, cache: new InMemoryCache() });

  for (const useGETForHashedQueries of [false, true]) {
    test(`PersistedQueryLink + HttpLink (${useGETForHashedQueries ? "GET" : "POST"}): hash, then text once, then hash only`, async () => {
      sent.length = 0;
      const link = ApolloLink.from([
        new PersistedQueryLink({ sha256, useGETForHashedQueries }),
        new HttpLink({ uri, headers: headers(), fetch: recordingFetch }),
      ]);
      const document = gql`query Count${useGETForHashedQueries ? "Get" : "Post"} { regions { totalCount } }`;
      const first = await client(link).query({ query: document, fetchPolicy: "network-only" });
      expect(first.data).toEqual({ regions: { __typename: "RegionsConnection", totalCount: 0 } });
      const second = await client(link).query({ query: document, fetchPolicy: "network-only" });
      expect(second.data).toEqual(first.data);
      // 1: hash only → not found; 2: text + hash (POST) → kept; 3: hash only → runs.
      expect(sent.length).toBe(3);
      expect(sent[0]?.method).toBe(useGETForHashedQueries ? "GET" : "POST");
      expect(sent[1]?.method).toBe("POST");
      expect(sent[1]?.body).toContain("query Count");
      expect(sent[2]?.body ?? "").not.toContain("query Count");
      expect(sent[2]?.url ?? "").not.toContain("query=");
    });
  }

  test("BatchHttpLink sends several operations as one request and each gets its own answer", async () => {
    sent.length = 0;
    const link = new BatchHttpLink({
      uri,
      headers: headers(),
      fetch: recordingFetch,
      batchMax: 10,
      batchInterval: 20,
    });
    const apollo = client(link);
    const [regions, jobs, users] = await Promise.all([
      apollo.query({ query: gql`query A { regions { totalCount } }` }),
      apollo.query({ query: gql`query B { jobs { totalCount } }` }),
      apollo.query({ query: gql`query C { users { totalCount } }` }),
    ]);
    expect(regions.data).toEqual({ regions: { __typename: "RegionsConnection", totalCount: 0 } });
    expect(jobs.data).toEqual({ jobs: { __typename: "JobsConnection", totalCount: 0 } });
    expect(users.data).toEqual({ users: { __typename: "UsersConnection", totalCount: 1 } });
    expect(sent.length).toBe(1);
    expect(JSON.parse(sent[0]?.body ?? "[]")).toHaveLength(3);
  });
});
