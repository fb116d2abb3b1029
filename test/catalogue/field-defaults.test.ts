/**
 * A custom field's default (README "Custom objects"): what the records already there get when the
 * field is added, without a change of theirs reaching the change log, and what a record inserted
 * without the field gets; at most MAX_DEFAULT_LENGTH characters, without U+0000.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_DEFAULT_LENGTH } from "../../api/catalogue/define-field.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { changeLog, graphqlClient } from "../support/graphql.ts";

let t: TestApp;
let acme: ProvisionedTenant;
beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: "error" });
  acme = await t.provision("acme");
});
afterAll(() => t.close());

const admin = (method: string, path: string, body?: unknown) =>
  t.call(method, path, { token: acme.adminToken, body });
const addField = (name: string, column: Record<string, unknown>) =>
  admin("POST", "/custom/standalone/fields", { schemaName: "Regions", name, column });
const regionFields = async () =>
  (await t.catalogues.get(acme.tenant.id)).objects
    .find((o) => o.name === "Regions")
    ?.fields.map((f) => f.name);

describe("a default", () => {
  test("is given to the records there when the field is added (no change logged), and to records inserted without it", async () => {
    const gql = graphqlClient(t, acme.adminToken);
    const inserted = await gql(`mutation { schema {
      a: insertRegions(input: {Name: "A", Timezone: "UTC"})
      b: insertRegions(input: {Name: "B", Timezone: "UTC"})
    } }`);
    expect(inserted.errors).toBeUndefined();
    const logged = (await changeLog(t, acme.tenant.id)).length;
    const code = `${"x".repeat(MAX_DEFAULT_LENGTH - 3)}'\\"`;

    expect((await addField("Code", { type: "textarea", defaultValue: code })).status).toBe(200);
    expect((await addField("Rank", { type: "int", defaultValue: 3 })).status).toBe(200);

    expect((await changeLog(t, acme.tenant.id)).length).toBe(logged);
    const later = await gql(`mutation { schema {
      c: insertRegions(input: {Name: "C", Timezone: "UTC"})
      d: insertRegions(input: {Name: "D", Timezone: "UTC", Code: null, Rank: 9})
    } }`);
    expect(later.errors).toBeUndefined();
    const listed = await gql(`{ regions(orderBy: "Name ASC") { edges { node { Name Code Rank } } } }`);
    expect(listed.data?.regions).toEqual({
      edges: [
        { node: { Name: "A", Code: code, Rank: 3 } },
        { node: { Name: "B", Code: code, Rank: 3 } },
        { node: { Name: "C", Code: code, Rank: 3 } },
        { node: { Name: "D", Code: null, Rank: 9 } },
      ],
    });
    const found = await gql(`{ regions(filter: "Rank == 3 AND Code LIKE 'xxx%'") { totalCount } }`);
    expect(found.data?.regions).toEqual({ totalCount: 3 });
  });

  test(`longer than ${MAX_DEFAULT_LENGTH} characters, whatever the field's maxLength, is 400 validation_failed; nothing is added`, async () => {
    const before = await regionFields();
    const long = "d".repeat(MAX_DEFAULT_LENGTH + 1);
    const { status, body } = await addField("Long", { type: "textarea", defaultValue: long });
    expect(status).toBe(400);
    expect(body).toMatchObject({
      errorType: "validation_failed",
      details: [
        {
          path: "column.defaultValue",
          message: `${MAX_DEFAULT_LENGTH + 1} characters: a default may have at most ${MAX_DEFAULT_LENGTH}`,
        },
      ],
    });
    const defined = await admin("POST", "/custom/standalone/schemas", {
      name: "Notes",
      fields: [{ name: "Body", column: { type: "textarea", maxLength: 100_000, defaultValue: long } }],
    });
    expect(defined.status).toBe(400);
    expect(defined.body.details).toEqual([
      {
        path: "fields[0].column.defaultValue",
        message: `${MAX_DEFAULT_LENGTH + 1} characters: a default may have at most ${MAX_DEFAULT_LENGTH}`,
      },
    ]);
    expect(await regionFields()).toEqual(before);
    expect((await admin("GET", "/custom/schemas")).body.result).toEqual([]);
  });

  test("holding U+0000 is 400 validation_failed; a string's maxLength still bounds its default", async () => {
    const nul = await addField("Nul", { type: "string", defaultValue: "a\u0000b" });
    expect(nul.status).toBe(400);
    expect(nul.body.details).toEqual([
      { path: "column.defaultValue", message: "a default cannot hold the NUL character (U+0000)" },
    ]);
    const short = await addField("Short", { type: "string", maxLength: 5, defaultValue: "toolong" });
    expect(short.status).toBe(400);
    expect(short.body.details).toEqual([{ path: "column.defaultValue", message: "longer than maxLength 5" }]);
  });
});
