/**
 * Per-token and per-tenant rate limits over HTTP: small buckets refilling at
 * one request per 10 s, so what a test spends stays spent while it runs.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type CallResult, createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";

const SMALL = {
  RATE_LIMIT_TOKEN_PER_SECOND: "0.1",
  RATE_LIMIT_TOKEN_BURST: "3",
  RATE_LIMIT_TENANT_PER_SECOND: "0.1",
  RATE_LIMIT_TENANT_BURST: "5",
};

const budget = ({ headers }: CallResult) => ({
  limit: headers.get("ratelimit-limit"),
  remaining: headers.get("ratelimit-remaining"),
  reset: headers.get("ratelimit-reset"),
});

const expectRefused = (answer: CallResult, limit: string, whose: RegExp) => {
  expect(answer.status).toBe(429);
  expect(answer.body).toEqual({ errorType: "rate_limited", message: expect.stringMatching(whose) });
  expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(Number(answer.headers.get("retry-after"))).toBeLessThanOrEqual(10);
  expect(budget(answer)).toMatchObject({ limit, remaining: "0" });
};

describe("rate limits", () => {
  let t: TestApp;
  let acme: ProvisionedTenant;
  beforeAll(async () => {
    t = await createTestApp(SMALL);
    acme = await t.provision("acme");
  });
  afterAll(() => t.close());

  const whoami = (token: string) => t.call("GET", "/auth/whoami", { token });

  test("a token is refused 429 with Retry-After after its burst; every answer tells its budget", async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await whoami(acme.adminToken));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429]);
    expect(answers.slice(0, 3).map(budget)).toEqual([
      { limit: "3", remaining: "2", reset: "10" },
      { limit: "3", remaining: "1", reset: "20" },
      { limit: "3", remaining: "0", reset: "30" },
    ]);
    expectRefused(answers[3] as CallResult, "3", /this token \(/);
  });

  test("another token of the tenant passes until the tenant's bucket is empty", async () => {
    const { token } = await t.addUser(acme.tenant.id, ["administrator"]);
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await whoami(token));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 429]);
    // The tenant's bucket (5, three taken by the first token) is the one nearer to empty.
    expect(answers.slice(0, 2).map(budget)).toEqual([
      { limit: "5", remaining: "1", reset: "40" },
      { limit: "5", remaining: "0", reset: "50" },
    ]);
    expectRefused(answers[2] as CallResult, "5", /this token's tenant/);
  });

  test("another tenant is unaffected, on REST and on /graphql", async () => {
    const globex = await t.provision("globex");
    expect(budget(await whoami(globex.adminToken))).toEqual({ limit: "3", remaining: "2", reset: "10" });
    // A list query's answer is JSON text the store wrote: the headers go on it all the same.
    const listed = await t.call("POST", "/graphql/graphql", {
      token: globex.adminToken,
      body: { query: "{ jobs { edges { node { UID } } } }" },
    });
    expect(listed.status).toBe(200);
    expect(listed.body.data.jobs.edges).toEqual([]);
    expect(budget(listed)).toEqual({ limit: "3", remaining: "1", reset: "20" });
  });

  test("/graphql is limited like every authenticated route: HTTP 429 in the REST error shape", async () => {
    const answer = await t.call("POST", "/graphql/graphql", {
      token: acme.adminToken,
      body: { query: "{ __typename }" },
    });
    expectRefused(answer, "3", /this token/);
  });

  test("an error answer after authentication carries the budget too", async () => {
    const initech = await t.provision("initech");
    const answer = await t.call("POST", "/auth/token", { token: initech.adminToken, body: { roles: "x" } });
    expect(answer.status).toBe(400);
    expect(budget(answer)).toEqual({ limit: "3", remaining: "2", reset: "10" });
  });

  test("requests without a valid token are not counted and carry no budget", async () => {
    const umbrella = await t.provision("umbrella");
    for (let i = 0; i < 5; i++) {
      const answer = await whoami("not-a-token");
      expect(answer.status).toBe(401);
      expect(answer.headers.get("ratelimit-remaining")).toBeNull();
    }
    expect(budget(await whoami(umbrella.adminToken)).remaining).toBe("2");
  });
});

test("two API processes on one Redis share the buckets", async () => {
  const first = await createTestApp(SMALL);
  const second = await createTestApp({ ...SMALL, ...first.storeEnv, REDIS_PREFIX: first.redis.prefix });
  try {
    const { adminToken } = await first.provision("shared");
    const apps = [first, second, first, second];
    const answers = [];
    for (const app of apps) answers.push(await app.call("GET", "/auth/whoami", { token: adminToken }));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429]);
    expect(answers.map((answer) => answer.headers.get("ratelimit-remaining"))).toEqual(["2", "1", "0", "0"]);
  } finally {
    await second.close();
    await first.close();
  }
});

test("the default limits refuse one token's flood: 3,000 requests as fast as they go", async () => {
  const t = await createTestApp();
  try {
    const { adminToken } = await t.provision("flood");
    const { RATE_LIMIT_TOKEN_PER_SECOND: rate, RATE_LIMIT_TOKEN_BURST: burst } = t.config;
    const statuses: number[] = [];
    const started = performance.now();
    for (let sent = 0; sent < 3000; sent += 100) {
      const batch = Array.from({ length: 100 }, () =>
        t.app.handle(
          new Request("http://test.local/auth/whoami", {
            headers: { authorization: `Bearer ${adminToken}` },
          }),
        ),
      );
      for (const response of await Promise.all(batch)) statuses.push(response.status);
    }
    const seconds = (performance.now() - started) / 1000;
    const admitted = statuses.filter((status) => status === 200).length;
    const refused = statuses.filter((status) => status === 429).length;
    // Before the limits, all 3,000 were answered 200.
    expect(admitted + refused).toBe(3000);
    expect(admitted).toBeLessThanOrEqual(burst + Math.ceil(rate * seconds) + 1);
    expect(refused).toBeGreaterThan(0);
  } finally {
    await t.close();
  }
});
