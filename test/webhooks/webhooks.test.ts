import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";

let t: TestApp;
let acme: ProvisionedTenant;
let globex: ProvisionedTenant;
beforeAll(async () => {
  t = await createTestApp({ WEBHOOKS_ALLOW_HTTP: "false" });
  acme = await t.provision("acme");
  globex = await t.provision("globex");
  await t.call("POST", "/configuration/extension", {
    token: acme.adminToken,
    body: { key: "HOOK_HOST", value: "hooks.example.com" },
  });
  await t.call("POST", "/configuration/extension", {
    token: acme.adminToken,
    body: { key: "API_KEY", value: "k-secret-123", configType: "secret" },
  });
});
afterAll(() => t.close());

const admin = (method: string, path: string, body?: unknown, tenant = acme) =>
  t.call(method, path, { token: tenant.adminToken, body });
const SEED_QUERY = `subscription { schemaJobs(filter: "JobStatus == 'Queued'") { operation timestamp data { UID Name JobStatus } previous { UID Name JobStatus } } }`;
const valid = (over: Record<string, unknown> = {}) => ({
  name: `hook-${crypto.randomUUID().slice(0, 8)}`,
  url: "https://{{ HOOK_HOST }}/events",
  type: "graphql",
  query: SEED_QUERY,
  headers: { "X-Api-Key": "{{ API_KEY }}" },
  ...over,
});

describe("POST /webhooks", () => {
  test("creates a webhook: 201 with the record and a whsec_ secret shown once", async () => {
    const { status, body } = await admin("POST", "/webhooks", valid({ name: "jobs" }));
    expect(status).toBe(201);
    const { id, secret } = structuredClone(body.result) as { id: string; secret: string };
    expect(body.result).toMatchObject({
      id: expect.any(String),
      name: "jobs",
      url: "https://{{ HOOK_HOST }}/events",
      type: "graphql",
      query: SEED_QUERY,
      headers: { "X-Api-Key": "{{ API_KEY }}" },
      createdAt: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
    });
    const fetched = await admin("GET", `/webhooks/${id}`);
    expect(fetched.body.result.id).toBe(id);
    expect(fetched.body.result.secret).toBeUndefined();
    const listed = await admin("GET", "/webhooks");
    expect(JSON.stringify(listed.body)).not.toContain(secret.slice(6));

    expect(JSON.stringify(listed.body)).not.toContain("k-secret-123");
  });

  const cases: [string, Record<string, unknown>, string][] = [
    ["an unknown object", { query: "subscription { schemaNope { operation } }" }, "query"],
    ["an unknown field", { query: "subscription { schemaJobs { data { Nope } } }" }, "query"],
    ["a query that is not a subscription", { query: "{ jobs { totalCount } }" }, "query"],
    ["a syntax error", { query: "subscription { schemaJobs { " }, "query"],
    [
      "a filter that does not parse",
      { query: `subscription { schemaJobs(filter: "JobStatus ==") { operation } }` },
      "filter",
    ],
    [
      "a filter naming an unknown field",
      { query: `subscription { schemaJobs(filter: "Staus == 'x'") { operation } }` },
      "filter",
    ],
    [
      "an extendedFilter without Current/Previous",
      { query: `subscription { schemaJobs(extendedFilter: "JobStatus == 'x'") { operation } }` },
      "extendedFilter",
    ],
    [
      "a sub-query filter",
      {
        query: `subscription { schemaJobs(filter: "RegionId IN (SELECT UID FROM Regions WHERE Name == 'x')") { operation } }`,
      },
      "filter",
    ],
    [
      "an unknown operation",
      { query: "subscription { schemaJobs(operation: [INSERT, RENAME]) { operation } }" },
      "query",
    ],
    ["a plain http URL", { url: "http://hooks.example.com/x" }, "url"],
    ["no URL scheme", { url: "hooks.example.com/x" }, "url"],
    ["a URL over 2048 characters", { url: `https://x.example.com/${"a".repeat(2048)}` }, "url"],
    ["an undefined variable in the URL", { url: "https://{{ NOPE }}/x" }, "url"],
    ["an undefined variable in a header", { headers: { "X-A": "{{ MISSING }}" } }, "headers.X-A"],
    ["a reserved header", { headers: { "Content-Type": "text/plain" } }, "headers.Content-Type"],
    ["a header with a line break", { headers: { "X-A": "a\r\nB: c" } }, "headers.X-A"],
    ["a wrong type", { type: "rest" }, "type"],
    ["a missing name", { name: "" }, "name"],
  ];
  for (const [what, over, path] of cases) {
    test(`refuses ${what} with 400 validation_failed at ${path}`, async () => {
      const before = (await admin("GET", "/webhooks")).body.result.length;
      const { status, body } = await admin("POST", "/webhooks", valid(over));
      expect(status).toBe(400);
      expect(body.errorType).toBe("validation_failed");
      expect(body.details.map((d: { path: string }) => d.path)).toContain(path);
      expect((await admin("GET", "/webhooks")).body.result.length).toBe(before);
    });
  }

  test("every problem is told at once, whichever part of the body is malformed", async () => {
    const problemsOf = async (over: Record<string, unknown>) =>
      ((await admin("POST", "/webhooks", valid(over))).body.details as { path: string; message: string }[])
        .map((d) => `${d.path}: ${d.message}`)
        .sort();
    const shapeAndMore = await problemsOf({
      name: "",
      headers: { "Bad Header": "x" },
      url: "ftp://{{ NOPE }}/x",
      query: "subscription { schemaJobz { operation } }",
    });
    expect(shapeAndMore).toEqual([
      "headers.Bad Header: not a valid header name",
      expect.stringMatching(/^name: /),
      expect.stringMatching(/^query: .*schemaJobz/),
      "url: must start with https://",
      "url: undefined config variable: NOPE",
    ]);
    const selectionAndFilter = await problemsOf({
      query: `subscription { schemaJobs(filter: "JobStatu == 1") { data { UID Region { Name } } } }`,
    });
    expect(selectionAndFilter).toEqual([
      expect.stringMatching(/^filter: .*JobStatu/),
      expect.stringMatching(/^query: .*Region/),
    ]);
  });

  test("filter errors carry their position", async () => {
    const { body } = await admin(
      "POST",
      "/webhooks",
      valid({ query: `subscription { schemaJobs(filter: "Duration > 'abc'") { operation } }` }),
    );
    expect(body.details[0].message).toMatch(/offset \d+/);
  });

  test("names are unique per tenant (any case), not across tenants", async () => {
    await admin("POST", "/webhooks", valid({ name: "Unique-Name" }));
    expect((await admin("POST", "/webhooks", valid({ name: "unique-name" }))).status).toBe(409);
    await t.call("POST", "/configuration/extension", {
      token: globex.adminToken,
      body: { key: "HOOK_HOST", value: "g.example.com" },
    });
    await t.call("POST", "/configuration/extension", {
      token: globex.adminToken,
      body: { key: "API_KEY", value: "g" },
    });
    expect((await admin("POST", "/webhooks", valid({ name: "Unique-Name" }), globex)).status).toBe(201);
  });
});

describe("GET, PUT, DELETE /webhooks/{id}", () => {
  test("PUT replaces the definition and keeps the id; DELETE removes it", async () => {
    const created = (await admin("POST", "/webhooks", valid())).body.result;
    const replaced = await admin(
      "PUT",
      `/webhooks/${created.id}`,
      valid({ name: created.name, query: "subscription { schemaRegions { operation data { Name } } }" }),
    );
    expect(replaced.status).toBe(200);
    expect(replaced.body.result).toMatchObject({
      id: created.id,
      query: "subscription { schemaRegions { operation data { Name } } }",
    });
    expect(replaced.body.result.secret).toBeUndefined();
    const bad = await admin(
      "PUT",
      `/webhooks/${created.id}`,
      valid({ query: "subscription { schemaNope { operation } }" }),
    );
    expect(bad.status).toBe(400);
    expect((await admin("DELETE", `/webhooks/${created.id}`)).status).toBe(200);
    expect((await admin("GET", `/webhooks/${created.id}`)).status).toBe(404);
  });

  test("another tenant's webhook is not found, and non-admins are refused", async () => {
    const created = (await admin("POST", "/webhooks", valid())).body.result;
    for (const [method, body] of [
      ["GET", undefined],
      ["PUT", valid()],
      ["DELETE", undefined],
    ] as const) {
      expect((await admin(method, `/webhooks/${created.id}`, body, globex)).status).toBe(404);
    }
    expect((await admin("GET", `/webhooks/${created.id}/deliveries`, undefined, globex)).status).toBe(404);
    const { token } = await t.addUser(acme.tenant.id, ["scheduler"]);
    expect((await t.call("GET", "/webhooks", { token })).status).toBe(403);
    expect((await t.call("POST", "/webhooks", { token, body: valid() })).status).toBe(403);
  });

  test("a bad delivery-list query string is named as such, with every problem", async () => {
    const created = (await admin("POST", "/webhooks", valid())).body.result;
    const answer = await admin("GET", `/webhooks/${created.id}/deliveries?status=bogus&limit=abc`);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      errorType: "validation_failed",
      message: "the request query string is invalid",
    });
    expect(answer.body.details.map((d: { path: string }) => d.path).sort()).toEqual(["limit", "status"]);
  });
});

describe("secrets", () => {
  test("never appear in any response, log line or error", async () => {
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    const logged = await createTestApp({ LOG_LEVEL: "debug", WEBHOOKS_ALLOW_HTTP: "false" });
    const answers: unknown[] = [];
    let signing = "";
    try {
      const tenant = await logged.provision("secretive");
      const call = async (method: string, path: string, body?: unknown) => {
        const answer = await logged.call(method, path, { token: tenant.adminToken, body });
        answers.push(answer.body);
        return answer;
      };
      await call("POST", "/configuration/extension", {
        key: "TOKEN",
        value: "super-secret-value-42",
        configType: "secret",
      });
      await call("POST", "/configuration/extension", {
        key: "TOKEN",
        value: "super-secret-value-43",
        configType: "secret",
      });
      await call("GET", "/configuration/extension");
      await call("GET", "/configuration/extension/TOKEN");
      const created = await call("POST", "/webhooks", {
        ...valid(),
        url: "https://x.example.com/{{ TOKEN }}",
        headers: { "X-T": "{{ TOKEN }}" },
      });
      signing = created.body.result.secret;
      answers.pop();
      await call("POST", "/webhooks", { ...valid(), url: "http://x.example.com/{{ TOKEN }}" });
      await call("GET", "/webhooks");
      await call("GET", `/webhooks/${created.body.result.id}`);
      await call("PUT", `/webhooks/${created.body.result.id}`, {
        ...valid(),
        name: created.body.result.name,
        headers: { "X-T": "{{ TOKEN }} {{ NOPE }}" },
      });
      await call("GET", `/webhooks/${created.body.result.id}/deliveries`);
    } finally {
      process.stderr.write = write;
      await logged.close();
    }
    const everything = JSON.stringify(answers) + lines.join("");
    expect(signing).toStartWith("whsec_");
    for (const secret of ["super-secret-value-42", "super-secret-value-43", signing.slice(6)])
      expect(everything).not.toContain(secret);
  });
});
