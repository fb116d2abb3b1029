/**
 * Text the engines cannot store as given. A lone surrogate (JSON's `\uD800`) has no UTF-8 form: every
 * engine would keep U+FFFD instead, so two different keys would be one. It is refused wherever text
 * comes in, on every engine, naming the member (api/model/well-formed-text.ts). U+0000 is kept by
 * the engines that can hold it and refused, naming the member, by those that cannot (PostgreSQL).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ILL_FORMED_TEXT } from "../../api/model/well-formed-text.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { graphqlClient } from "../support/graphql.ts";

const NUL_IN_TEXT = "text cannot hold the NUL character (U+0000)";

let t: TestApp;
let acme: ProvisionedTenant;
let gql: ReturnType<typeof graphqlClient>;
beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: "error" });
  acme = await t.provision("acme");
  gql = graphqlClient(t, acme.adminToken);
  const created = await admin("POST", "/custom/standalone/schemas", {
    name: "Probe",
    fields: [
      { name: "Skey", column: { type: "string", unique: true } },
      { name: "Note", column: { type: "textarea" } },
    ],
  });
  expect(created.status).toBe(200);
});
afterAll(() => t.close());

const admin = (method: string, path: string, body?: unknown) =>
  t.call(method, path, { token: acme.adminToken, body });
const INSERT = "mutation ($input: NewProbe!) { schema { insertProbe(input: $input) } }";
const keys = async () =>
  (
    (await gql('{ probe(orderBy: "Skey ASC") { edges { node { Skey } } } }')).data as {
      probe: { edges: { node: { Skey: string } }[] };
    }
  ).probe.edges.map((edge) => edge.node.Skey);
const webhook = (over: Record<string, unknown>) => ({
  name: `hook-${crypto.randomUUID().slice(0, 8)}`,
  url: "https://hooks.example.com/events",
  type: "graphql",
  query: "subscription { schemaProbe { operation data { UID } } }",
  ...over,
});
/** A REST answer: 400 validation_failed with exactly these details. */
const expectRefused = (answer: { status: number; body: Record<string, unknown> }, details: unknown) => {
  expect(answer.status).toBe(400);
  expect(answer.body.errorType).toBe("validation_failed");
  expect(answer.body.details).toEqual(details);
};

describe("a lone surrogate", () => {
  test("in a record value (a GraphQL variable) is VALIDATION_FAILED naming the field; nothing is written, and another key is still free", async () => {
    for (const input of [{ Skey: "sur\ud800x" }, { Skey: "ok-1", Note: "half \udc00 pair" }]) {
      const answer = await gql(INSERT, { input });
      expect(answer.errors?.[0]?.extensions.code).toBe("VALIDATION_FAILED");
      const [field] = Object.keys(input).filter((name) => name !== "Skey" || input.Skey !== "ok-1");
      expect(answer.errors?.[0]?.extensions.details).toEqual([{ path: field, message: ILL_FORMED_TEXT }]);
    }
    const upsert = await gql(
      'mutation ($input: NewProbe!) { schema { upsertProbe(input: $input, keyField: "Skey") } }',
      { input: { Skey: "sur\udbffx" } },
    );
    expect(upsert.errors?.[0]?.extensions.code).toBe("VALIDATION_FAILED");
    expect(await keys()).toEqual([]);
    expect((await gql(INSERT, { input: { Skey: "sur\ufffdx" } })).errors).toBeUndefined();
    expect(await keys()).toEqual(["sur\ufffdx"]);
  });

  test("in a filter's string literal is FILTER_PARSE_ERROR: it would match U+FFFD in SQL, but not in memory", async () => {
    const answer = await gql("query ($f: String!) { probe(filter: $f) { edges { node { Skey } } } }", {
      f: "Skey == 'sur\ud800x'",
    });
    expect(answer.errors?.[0]?.extensions.code).toBe("FILTER_PARSE_ERROR");
    expect(answer.errors?.[0]?.message).toContain(ILL_FORMED_TEXT);
  });

  test("in a config variable's value or description is 400 validation_failed naming it; nothing is written", async () => {
    const refused = await admin("POST", "/configuration/extension", {
      key: "SUR",
      value: "a\ud800",
      description: "\udfff",
    });
    expectRefused(refused, [
      { path: "value", message: ILL_FORMED_TEXT },
      { path: "description", message: ILL_FORMED_TEXT },
    ]);
    const listed = (await admin("GET", "/configuration/extension")).body.result as { key: string }[];
    expect(listed.map((v) => v.key)).not.toContain("SUR");
  });

  test("in a webhook's name, URL, query or headers is 400 validation_failed naming each; the name stays free", async () => {
    const refused = await admin(
      "POST",
      "/webhooks",
      webhook({
        name: "n\udc00",
        url: "https://hooks.example.com/\ud800",
        query: "subscription { schemaProbe { operation } } #\ud800",
        headers: { "X-Tag": "\ud800" },
      }),
    );
    expectRefused(refused, [
      { path: "name", message: ILL_FORMED_TEXT },
      { path: "url", message: ILL_FORMED_TEXT },
      { path: "query", message: ILL_FORMED_TEXT },
      { path: "headers.X-Tag", message: ILL_FORMED_TEXT },
    ]);
    expect((await admin("POST", "/webhooks", webhook({ name: "n\ufffd" }))).status).toBe(201);
  });

  test("in an object's or a field's name or label is 400 validation_failed naming it; nothing is created", async () => {
    const object = await admin("POST", "/custom/standalone/schemas", {
      name: "Sur\ud800",
      label: "\udc00",
      fields: [{ name: "F", label: "x\ud800", column: { type: "string" } }],
    });
    expectRefused(object, [
      { path: "name", message: ILL_FORMED_TEXT },
      { path: "label", message: ILL_FORMED_TEXT },
      { path: "fields.0.label", message: ILL_FORMED_TEXT },
    ]);
    const field = await admin("POST", "/custom/standalone/fields", {
      schemaName: "Probe",
      name: "G",
      label: "\ud800",
      column: { type: "string" },
    });
    expectRefused(field, [{ path: "label", message: ILL_FORMED_TEXT }]);
    const listed = (await admin("GET", "/custom/schemas")).body.result as { schema: { name: string } }[];
    expect(listed.map((o) => o.schema.name)).toEqual(["Probe"]);
  });
});

test("a body nested as deep as JSON allows is walked without running out of stack: 400, never 500", async () => {
  const depth = 50_000;
  const rawBody = `{"key":"DEEP","value":${"[".repeat(depth)}"\\ud800"${"]".repeat(depth)}}`;
  const answer = await t.call("POST", "/configuration/extension", { token: acme.adminToken, rawBody });
  expect(answer.status).toBe(400);
  expect(answer.body.details).toEqual([{ path: `value${".0".repeat(depth)}`, message: ILL_FORMED_TEXT }]);
});

describe("U+0000, kept where the engine holds it, else refused naming the member", () => {
  /** Stored (true) or refused as 400 validation_failed naming exactly `paths` (false). */
  const keptOrNamed = (answer: { status: number; body: Record<string, unknown> }, paths: string[]) => {
    if (answer.status < 300) return true;
    expectRefused(
      answer,
      paths.map((path) => ({ path, message: NUL_IN_TEXT })),
    );
    return false;
  };

  test("a unique record field: its lookup and its write name it", async () => {
    const answer = await gql(INSERT, { input: { Skey: "nul\u0000key" } });
    if (answer.errors) {
      expect(answer.errors[0]?.extensions.code).toBe("VALIDATION_FAILED");
      expect(answer.errors[0]?.extensions.details).toEqual([{ path: "Skey", message: NUL_IN_TEXT }]);
    } else expect(await keys()).toContain("nul\u0000key");
  });

  test("a config variable's value and description", async () => {
    const answer = await admin("POST", "/configuration/extension", {
      key: "NUL",
      value: "a\u0000b",
      description: "c\u0000",
    });
    keptOrNamed(answer, ["value", "description"]);
  });

  test("a webhook's name, URL and query", async () => {
    const answer = await admin(
      "POST",
      "/webhooks",
      webhook({
        name: "nul\u0000hook",
        url: "https://hooks.example.com/\u0000",
        query: "subscription { schemaProbe { operation } } #\u0000",
      }),
    );
    keptOrNamed(answer, ["name", "url", "query"]);
  });

  test("an id looked up: no record, not an error", async () => {
    const answer = await gql("query ($id: ID!) { probeById(UID: $id) { UID } }", { id: "a\u0000b" });
    expect(answer.errors).toBeUndefined();
    expect(answer.data).toEqual({ probeById: null });
  });
});
