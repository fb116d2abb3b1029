import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  buildClientSchema,
  buildSchema,
  getIntrospectionQuery,
  type IntrospectionQuery,
  printSchema,
} from "graphql";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";

let t: TestApp;
let acme: ProvisionedTenant;
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.provision("acme");
});
afterAll(() => t.close());

const getSchema = (headers: Record<string, string> = {}) =>
  t.call("GET", "/graphql/schema", { token: acme.adminToken, headers });

describe("GET /graphql/schema", () => {
  test("answers SDL as text/plain with an ETag, and 304 for a matching If-None-Match", async () => {
    const first = await getSchema();
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toStartWith("text/plain");
    const etag = first.headers.get("etag") ?? "";
    expect(etag).toMatch(/^".+"$/);
    expect(() => buildSchema(first.body)).not.toThrow();

    const again = await getSchema({ "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(again.body).toBe("");
  });

  test("a new field changes the SDL and its ETag for the very next request", async () => {
    const before = await getSchema();
    const added = await t.call("POST", "/custom/standalone/fields", {
      token: acme.adminToken,
      body: { schemaName: "Jobs", name: "Priority", column: { type: "int" } },
    });
    expect(added.status).toBe(200);
    const after = await getSchema({ "if-none-match": before.headers.get("etag") ?? "" });
    expect(after.status).toBe(200);
    expect(after.body).toContain("Priority: Int");
    expect(after.headers.get("etag")).not.toBe(before.headers.get("etag"));
  });

  test("required fields say so in the input types", async () => {
    const schema = buildSchema((await getSchema()).body);
    const required = (type: string, field: string) =>
      (schema.getType(type) as { getFields(): Record<string, { description?: string | null }> })
        .getFields()
        [field]?.description?.includes("Required") ?? false;
    expect(required("NewRegions", "Timezone")).toBe(true);
    expect(required("NewJobs", "RegionId")).toBe(true);
    expect(required("NewJobs", "Description")).toBe(false);
  });

  test("every role may read it; no token may not", async () => {
    const { token } = await t.addUser(acme.tenant.id, ["resource"]);
    expect((await t.call("GET", "/graphql/schema", { token })).status).toBe(200);
    expect((await t.call("GET", "/graphql/schema")).status).toBe(401);
  });
});

describe("introspection", () => {
  test("a client building its schema from introspection gets the same types as the SDL", async () => {
    const { status, body } = await t.call("POST", "/graphql/graphql", {
      token: acme.adminToken,
      // A client that asks for the scalars' specification URLs (@specifiedBy) gets them too.
      body: { query: getIntrospectionQuery({ specifiedByUrl: true }) },
    });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    const client = buildClientSchema(body.data as IntrospectionQuery);
    const sdl = (await getSchema()).body as string;
    expect(printSchema(client)).toBe(printSchema(buildSchema(sdl)));
  });
});

describe("GraphQL request errors", () => {
  const post = (body: unknown) => t.call("POST", "/graphql/graphql", { token: acme.adminToken, body });

  test("a syntax error is GRAPHQL_PARSE_FAILED with its location", async () => {
    const { status, body } = await post({ query: "{ jobs { edges " });
    expect(status).toBe(200);
    expect(body.errors[0].extensions.code).toBe("GRAPHQL_PARSE_FAILED");
    expect(body.errors[0].locations[0]).toEqual({ line: 1, column: 16 });
  });

  test("an unknown field is GRAPHQL_VALIDATION_FAILED", async () => {
    const { body } = await post({ query: "{ jobs { edges { node { Nope } } } }" });
    expect(body.errors[0].extensions.code).toBe("GRAPHQL_VALIDATION_FAILED");
    expect(body.errors[0].message).toContain("Nope");
  });

  test("subscriptions are refused over HTTP with a pointer to webhooks", async () => {
    const { body } = await post({ query: "subscription { schemaJobs { operation } }" });
    expect(body.errors[0].message).toContain("webhooks");
  });

  test("a body without a query is a 400 validation_failed; no token is a 401", async () => {
    expect((await post({ variables: {} })).status).toBe(400);
    expect((await t.call("POST", "/graphql/graphql", { body: { query: "{ __typename }" } })).status).toBe(
      401,
    );
  });
});
