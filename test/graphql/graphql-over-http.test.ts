/**
 * GraphQL over HTTP as the spec's own audit sees it (graphql-http's serverAudits, run against our
 * real endpoint), and the rules behind it: the answer's media type from Accept, request errors 400
 * only for clients that accept application/graphql-response+json (clients sending application/json
 * keep their 200s), GET mutations 405 with Allow, the schema's @specifiedBy and picklist values.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildSchema, type GraphQLObjectType, type GraphQLScalarType } from "graphql";
import { serverAudits } from "graphql-http";
import { type GraphQLMediaType, negotiateMediaType } from "../../api/graphql/graphql-media.ts";
import {
  BigDecimalScalar,
  DurationScalar,
  InstantScalar,
  LocalDateScalar,
  LocalTimeScalar,
} from "../../api/graphql/schema/scalars.ts";
import { createTestApp, type TestApp } from "../support/app.ts";

const GQL = "application/graphql-response+json" as const;
const JSON_TYPE = "application/json" as const;

describe("the answer's media type from Accept", () => {
  const table: [string | null, GraphQLMediaType][] = [
    [null, JSON_TYPE],
    ["*/*", JSON_TYPE],
    ["application/json", JSON_TYPE],
    ["application/*", JSON_TYPE],
    [GQL, GQL],
    [`${GQL},application/json;q=0.9`, GQL], // Apollo Client 4's HttpLink
    [`application/json, ${GQL}`, GQL],
    [`application/json, ${GQL};q=0.5`, JSON_TYPE],
    [`${GQL};q=0, */*`, JSON_TYPE],
    ["text/html", JSON_TYPE],
  ];
  for (const [accept, expected] of table) {
    test(`${accept ?? "(none)"} → ${expected}`, () => expect(negotiateMediaType(accept)).toBe(expected));
  }
});

describe("GraphQL over HTTP on /graphql/graphql", () => {
  let t: TestApp;
  let token = "";
  beforeAll(async () => {
    t = await createTestApp();
    token = (await t.provision("over-http")).adminToken;
  });
  afterAll(() => t.close());

  const fetchFn = (input: string, init?: RequestInit) => {
    const request = new Request(input, init);
    request.headers.set("authorization", `Bearer ${token}`);
    return t.app.handle(request);
  };

  test("graphql-http's server audit: every audit passes, no error, no warning, no notice", async () => {
    const results = [];
    for (const audit of serverAudits({ url: "http://test.local/graphql/graphql", fetchFn })) {
      results.push(await audit.fn());
    }
    const failed = results
      .filter((result) => result.status !== "ok")
      .map((result) => `${result.status}: ${result.name}`);
    expect(failed).toEqual([]);
    expect(results.length).toBeGreaterThanOrEqual(57);
  });

  const post = (body: unknown, accept?: string) =>
    t.call("POST", "/graphql/graphql", { token, body, headers: accept ? { accept } : {} });

  const requestErrors: [string, unknown, string][] = [
    ["a document that does not parse", { query: "{" }, "GRAPHQL_PARSE_FAILED"],
    ["a document that does not validate", { query: "{ noSuchField }" }, "GRAPHQL_VALIDATION_FAILED"],
    [
      "a variable that does not coerce",
      { query: "query ($id: ID!) { jobsById(UID: $id) { UID } }", variables: { id: { not: "an id" } } },
      "GRAPHQL_VALIDATION_FAILED",
    ],
    [
      "an unknown persisted query",
      { extensions: { persistedQuery: { version: 1, sha256Hash: "a".repeat(64) } } },
      "PERSISTED_QUERY_NOT_FOUND",
    ],
  ];
  for (const [name, body, code] of requestErrors) {
    test(`${name}: 400 without data for graphql-response+json, 200 as before for application/json`, async () => {
      const strict = await post(body, GQL);
      expect(strict.status).toBe(400);
      expect(strict.headers.get("content-type")).toBe(`${GQL}; charset=utf-8`);
      expect(strict.body.data).toBeUndefined();
      expect(strict.body.errors[0].extensions.code).toBe(code);
      for (const accept of [JSON_TYPE, undefined]) {
        const legacy = await post(body, accept);
        expect(legacy.status).toBe(200);
        expect(legacy.headers.get("content-type")).toBe(`${JSON_TYPE}; charset=utf-8`);
        expect(legacy.body.errors[0].extensions.code).toBe(code);
      }
    });
  }

  test("an executed request with field errors answers 200 for both media types", async () => {
    for (const accept of [GQL, JSON_TYPE]) {
      const answer = await post({ query: `{ jobs(filter: "NoSuchField == 1") { totalCount } }` }, accept);
      expect(answer.status).toBe(200);
      expect(answer.body.errors[0].extensions.code).toBe("UNKNOWN_FIELD");
      expect("data" in answer.body).toBe(true);
    }
  });

  test("GET with a mutation: 405 with Allow: POST for both media types", async () => {
    const query = encodeURIComponent('mutation { schema { deleteJobs(UID: "x") } }');
    for (const accept of [GQL, JSON_TYPE]) {
      const answer = await t.call("GET", `/graphql/graphql?query=${query}`, { token, headers: { accept } });
      expect(answer.status).toBe(405);
      expect(answer.headers.get("allow")).toBe("POST");
    }
  });

  test("extensions that are not an object: 400 in the error shape", async () => {
    const answer = await post({ query: "{ __typename }", extensions: "persisted" });
    expect(answer.status).toBe(400);
    expect(answer.body.details).toEqual([{ path: "extensions", message: "must be an object" }]);
  });
});

describe("the schema's contract", () => {
  let t: TestApp;
  let sdl = "";
  beforeAll(async () => {
    t = await createTestApp();
    const { adminToken } = await t.provision("contract");
    sdl = (await t.call("GET", "/graphql/schema", { token: adminToken })).body as string;
  });
  afterAll(() => t.close());

  test("every custom scalar names its specification with @specifiedBy", () => {
    const expected: [GraphQLScalarType, string][] = [
      [InstantScalar, "https://scalars.graphql.org/andimarek/date-time.html"],
      [LocalDateScalar, "https://scalars.graphql.org/andimarek/local-date.html"],
      [LocalTimeScalar, "https://scalars.graphql.org/chillicream/local-time.html"],
      [BigDecimalScalar, "/graphql/scalars/BigDecimal"],
      [DurationScalar, "/graphql/scalars/Duration"],
    ];
    for (const [scalar, url] of expected) expect(scalar.specifiedByURL).toBe(url);
    // The standard objects use two of them; the served SDL carries the directive.
    expect(sdl).toContain(
      'scalar Instant @specifiedBy(url: "https://scalars.graphql.org/andimarek/date-time.html")',
    );
    expect(sdl).toContain('scalar Duration @specifiedBy(url: "/graphql/scalars/Duration")');
  });

  test("the scalars this service specifies itself are served, without a token", async () => {
    for (const name of ["BigDecimal", "Duration"]) {
      const page = await t.call("GET", `/graphql/scalars/${name}`);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toStartWith("text/markdown");
      expect(page.body).toStartWith(`# ${name} — GraphQL Custom Scalar`);
    }
    for (const name of ["Instant", "constructor", "__proto__"]) {
      expect((await t.call("GET", `/graphql/scalars/${name}`)).status).toBe(404);
    }
  });

  test("picklists stay String but their descriptions list the allowed values", () => {
    expect(sdl).toMatch(/"""[^"]*Allowed values: "Person", "Asset"\.\s*"""\s*ResourceType: String/);
    expect(sdl).toMatch(
      /Allowed values: "Administrator", "Scheduler", "Resource"\.\s*"""\s*UserTypes: \[String!\]/,
    );
  });

  test("what SPEC §5 makes required is non-null: input: NewX!, UID: ID!, keyField: String!", () => {
    const schema = buildSchema(sdl);
    const mutations = (schema.getType("SchemaMutations") as GraphQLObjectType).getFields();
    const argsOf = (field: string) =>
      Object.fromEntries((mutations[field]?.args ?? []).map((arg) => [arg.name, String(arg.type)]));
    expect(argsOf("insertJobs")).toEqual({ input: "NewJobs!", idAlias: "String" });
    expect(argsOf("upsertJobs")).toEqual({ input: "NewJobs!", keyField: "String!", idAlias: "String" });
    expect(argsOf("updateJobs")).toEqual({ input: "UpdateJobs!" });
    expect(argsOf("deleteJobs")).toEqual({ UID: "ID!" });
    const byId = schema.getQueryType()?.getFields().jobsById;
    expect(byId?.args.map((arg) => `${arg.name}: ${arg.type}`)).toEqual(["UID: ID!"]);
  });
});
