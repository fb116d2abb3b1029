/**
 * Subscriptions are bounded at definition time: a selection that would repeat
 * values into every delivery (1,600 aliases of one textarea made a 7.4 MB body
 * per change) is refused with 400 validation_failed naming the limit, and a
 * subscription that can never fire (`operation: []`) is refused too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";

let t: TestApp;
let acme: ProvisionedTenant;
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.provision("acme");
  // An object wide enough to select the default limit (200) without repeating a field: 101 fields.
  const created = await t.call("POST", "/custom/standalone/schemas", {
    token: acme.adminToken,
    body: {
      name: "Wide",
      fields: Array.from({ length: 101 }, (_, i) => ({ name: `F${i}`, column: { type: "string" } })),
    },
  });
  expect(created.status).toBe(200);
});
afterAll(() => t.close());

const admin = (method: string, path: string, body?: unknown) =>
  t.call(method, path, { token: acme.adminToken, body });
const definition = (query: string) => ({
  name: `hook-${crypto.randomUUID().slice(0, 8)}`,
  url: "https://hooks.example.com/events",
  type: "graphql",
  query,
});
/** `a0: F0 a1: F1 ...`: `count` fields of Wide. */
const wideFields = (count: number) => Array.from({ length: count }, (_, i) => `F${i}`).join(" ");
const webhookCount = async () => (await admin("GET", "/webhooks")).body.result.length as number;

describe("selection size", () => {
  test("1,600 aliases of one textarea are refused: 400 validation_failed naming the limit, nothing stored", async () => {
    const aliases = Array.from({ length: 1600 }, (_, i) => `a${i}: Notes`).join(" ");
    const query = `subscription { schemaAvailabilities { operation data { ${aliases} } } }`;
    const before = await webhookCount();
    const { status, body } = await admin("POST", "/webhooks", definition(query));
    expect(status).toBe(400);
    expect(body.errorType).toBe("validation_failed");
    expect(body.details).toContainEqual({
      path: "query",
      message: "the subscription selects 1600 fields under data and previous; at most 200 are allowed",
    });
    expect(body.details).toContainEqual({
      path: "query",
      message: expect.stringContaining("data selects Notes 1600 times"),
    });
    expect(JSON.stringify(body).length).toBeLessThan(2000);
    expect(await webhookCount()).toBe(before);
  });

  test("PUT refuses the same selection and keeps the stored definition", async () => {
    const created = await admin(
      "POST",
      "/webhooks",
      definition("subscription { schemaAvailabilities { data { Notes } } }"),
    );
    expect(created.status).toBe(201);
    const aliases = Array.from({ length: 1600 }, (_, i) => `a${i}: Notes`).join(" ");
    const replaced = await admin(
      "PUT",
      `/webhooks/${created.body.result.id}`,
      definition(`subscription { schemaAvailabilities { data { ${aliases} } } }`),
    );
    expect(replaced.status).toBe(400);
    expect(replaced.body.errorType).toBe("validation_failed");
    const stored = await admin("GET", `/webhooks/${created.body.result.id}`);
    expect(stored.body.result.query).toBe("subscription { schemaAvailabilities { data { Notes } } }");
  });

  test("200 fields (100 in data, 100 in previous) are accepted; 201 are refused", async () => {
    const atLimit = `subscription { schemaWide { operation timestamp data { ${wideFields(100)} } previous { ${wideFields(100)} } } }`;
    expect((await admin("POST", "/webhooks", definition(atLimit))).status).toBe(201);
    const over = `subscription { schemaWide { data { ${wideFields(101)} } previous { ${wideFields(100)} } } }`;
    const { status, body } = await admin("POST", "/webhooks", definition(over));
    expect(status).toBe(400);
    expect(body.details).toEqual([
      {
        path: "query",
        message: "the subscription selects 201 fields under data and previous; at most 200 are allowed",
      },
    ]);
  });

  test("a field, or a member of the event, selected twice under different aliases is refused", async () => {
    const cases: [string, string][] = [
      ["data { a: Name b: Name }", "data selects Name 2 times (as a, b); select each field once"],
      ["o1: operation o2: operation", "operation is selected 2 times (as o1, o2); select it once"],
      ["d1: data { Name } d2: data { Name }", "data is selected 2 times (as d1, d2); select it once"],
    ];
    for (const [selection, message] of cases) {
      const { status, body } = await admin(
        "POST",
        "/webhooks",
        definition(`subscription { schemaJobs { ${selection} } }`),
      );
      expect(status).toBe(400);
      expect(body.details).toEqual([{ path: "query", message }]);
    }
  });

  test("the same field in data and in previous, or under one key twice, is fine", async () => {
    for (const selection of [
      "data { Name } previous { Name }",
      "data { Name Name } ... on JobsChangeEvent { data { Name } }",
    ]) {
      const { status, body } = await admin(
        "POST",
        "/webhooks",
        definition(`subscription { schemaJobs { ${selection} } }`),
      );
      expect({ status, body: status === 201 ? null : body }).toEqual({ status: 201, body: null });
    }
  });
});

describe("operation argument", () => {
  test("operation: [] is refused: it would never fire", async () => {
    const { status, body } = await admin(
      "POST",
      "/webhooks",
      definition("subscription { schemaJobs(operation: []) { operation } }"),
    );
    expect(status).toBe(400);
    expect(body.errorType).toBe("validation_failed");
    expect(body.details).toEqual([
      {
        path: "operation",
        message:
          "names no operation, so the webhook would never fire; name INSERT, UPDATE or DELETE, or omit it for all",
      },
    ]);
  });

  test("a repeated operation ([INSERT, INSERT]) is accepted: it means INSERT", async () => {
    const { status } = await admin(
      "POST",
      "/webhooks",
      definition("subscription { schemaJobs(operation: [INSERT, INSERT]) { operation } }"),
    );
    expect(status).toBe(201);
  });
});
