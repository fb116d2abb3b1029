/**
 * Names of the longest length a definition takes (64 characters): PostgreSQL keeps the first 63
 * bytes of an identifier, so two such names agreeing in their first 61 characters once shared one
 * table or one column. Each object and field must get storage of its own, on every engine.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { graphqlClient } from "../support/graphql.ts";

let t: TestApp;
let acme: ProvisionedTenant;
beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: "error" });
  acme = await t.provision("acme");
});
afterAll(() => t.close());

const admin = (method: string, path: string, body?: unknown) =>
  t.call(method, path, { token: acme.adminToken, body });
const gql = (query: string) => graphqlClient(t, acme.adminToken)(query);
const bytes = (text: string) => Buffer.byteLength(text);
const lowerFirst = (name: string) => name.charAt(0).toLowerCase() + name.slice(1);

describe("two objects whose names agree in their first 63 characters", () => {
  const first = "P".repeat(64);
  const second = `${"P".repeat(63)}X`;

  test("both are created, each with a table name of its own within 63 bytes", async () => {
    const mappings: string[] = [];
    for (const name of [first, second]) {
      const { status, body } = await admin("POST", "/custom/standalone/schemas", {
        name,
        fields: [{ name: "X", column: { type: "int" } }],
      });
      expect(status).toBe(200);
      mappings.push(body.result.schema.mapping);
    }
    expect(new Set(mappings).size).toBe(2);
    for (const mapping of mappings) expect(bytes(mapping)).toBeLessThanOrEqual(63);
  });

  test("a record of one is not read through the other", async () => {
    const inserted = await gql(`mutation { schema { insert${first}(input: {X: 1}) } }`);
    expect(inserted.errors).toBeUndefined();
    const ofFirst = await gql(`{ ${lowerFirst(first)} { totalCount } }`);
    const ofSecond = await gql(`{ ${lowerFirst(second)} { totalCount } }`);
    expect(ofFirst).toEqual({ data: { [lowerFirst(first)]: { totalCount: 1 } } });
    expect(ofSecond).toEqual({ data: { [lowerFirst(second)]: { totalCount: 0 } } });
  });
});

describe("two fields whose names agree in their first 63 characters", () => {
  const first = "G".repeat(64);
  const second = `${"G".repeat(63)}H`;

  /** Inserts a record of `object` from `input`, then reads the two fields back from it: 1 and 2. */
  const expectInsertedAndRead = async (object: string, input: string) => {
    const inserted = await gql(`mutation { schema { insert${object}(input: {${input}}) } }`);
    expect(inserted.errors).toBeUndefined();
    const uid = (inserted.data as { schema: Record<string, string> }).schema[`insert${object}`];
    const read = await gql(`{ ${lowerFirst(object)}ById(UID: "${uid}") { ${first} ${second} } }`);
    expect(read).toEqual({ data: { [`${lowerFirst(object)}ById`]: { [first]: 1, [second]: 2 } } });
  };

  test.each(["Contacts", "PPPP"])(
    "added one by one to %s: both are created, with columns of their own, and records insert",
    async (object) => {
      if (object !== "Contacts") {
        const created = await admin("POST", "/custom/standalone/schemas", { name: object, fields: [] });
        expect(created.status).toBe(200);
      }
      const mappings: string[] = [];
      for (const name of [first, second]) {
        const { status, body } = await admin("POST", "/custom/standalone/fields", {
          schemaName: object,
          name,
          column: { type: "int" },
        });
        expect(status).toBe(200);
        mappings.push(body.result.mapping);
      }
      expect(new Set(mappings).size).toBe(2);
      for (const mapping of mappings) expect(bytes(mapping)).toBeLessThanOrEqual(63);

      const standard = object === "Contacts" ? 'FirstName: "Ada", LastName: "Lovelace", ' : "";
      await expectInsertedAndRead(object, `${standard}${first}: 1, ${second}: 2`);
    },
  );

  test("defined together with their object: both are created, and records insert", async () => {
    const { status } = await admin("POST", "/custom/standalone/schemas", {
      name: "Together",
      fields: [first, second].map((name) => ({ name, column: { type: "int" } })),
    });
    expect(status).toBe(200);
    await expectInsertedAndRead("Together", `${first}: 1, ${second}: 2`);
  });
});

describe("two long names whose digests meet (found by trying 98,410 names)", () => {
  // Both map to `___q…q_13e1b1eb`: the catalogue refuses the second rather than share storage.
  const first = `${"Q".repeat(51)}00000000020rb`;
  const second = `${"Q".repeat(51)}00000000023xl`;
  const customFields = async () =>
    (await t.catalogues.get(acme.tenant.id)).objects.flatMap((o) => o.fields.filter((f) => f.custom));

  test("the second object is refused with 409 conflict", async () => {
    const created = await admin("POST", "/custom/standalone/schemas", { name: first, fields: [] });
    expect(created.body.result.schema.mapping).toBe(`___${"q".repeat(51)}_13e1b1eb`);
    const { status, body } = await admin("POST", "/custom/standalone/schemas", { name: second, fields: [] });
    expect(status).toBe(409);
    expect(body.errorType).toBe("conflict");
    expect(body.message).toContain(`where the object '${first}' is stored`);
  });

  test("the second field added is refused with 409 conflict; nothing is added", async () => {
    const added = await admin("POST", "/custom/standalone/fields", {
      schemaName: "Regions",
      name: first,
      column: { type: "int" },
    });
    expect(added.status).toBe(200);
    const before = await customFields();
    const { status, body } = await admin("POST", "/custom/standalone/fields", {
      schemaName: "Regions",
      name: second,
      column: { type: "int" },
    });
    expect(status).toBe(409);
    expect(body.errorType).toBe("conflict");
    expect(await customFields()).toEqual(before);
  });

  test("the two in one definition are refused with 400 validation_failed; nothing is created", async () => {
    const before = await customFields();
    const { status, body } = await admin("POST", "/custom/standalone/schemas", {
      name: "Clashing",
      fields: [first, second].map((name) => ({ name, column: { type: "int" } })),
    });
    expect(status).toBe(400);
    expect(body.errorType).toBe("validation_failed");
    expect(body.details).toEqual([
      {
        path: "fields[1].name",
        message: `'${second}' would be stored as '___${"q".repeat(51)}_13e1b1eb', where the field '${first}' is stored`,
      },
    ]);
    expect(await customFields()).toEqual(before);
  });
});
