/**
 * Catalogue changes and reads racing on one object: fields added while the
 * object is deleted, records read and written while it goes. Every answer is
 * a success or a documented refusal, never an internal error, and what is
 * left afterwards is whole: no field outlives its object, and the name can be
 * used again. Found by the hostile-input fuzz on PostgreSQL, where a field
 * added beside a deletion that committed first reached ALTER TABLE on a table
 * already dropped (500), and a read resolved after the drop named a missing
 * table (an internal error in the answer).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";

let t: TestApp;
let acme: ProvisionedTenant;
beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: "error" });
  acme = await t.provision("acme");
});
afterAll(() => t.close());

const admin = (method: string, path: string, body?: unknown) =>
  t.call(method, path, { token: acme.adminToken, body });
const graphql = (query: string) => admin("POST", "/graphql/graphql", { query });

/** The GraphQL error codes of an answer (none for a clean one). */
const errorCodes = (body: unknown) =>
  ((body as { errors?: { extensions?: { code?: string } }[] }).errors ?? []).map((e) => e.extensions?.code);

const ROUNDS = 8;

test("fields added while their object is deleted: each answer a success or a refusal, nothing left behind", async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const created = await admin("POST", "/custom/standalone/schemas", {
      name: "Racing",
      fields: [{ name: "Code", column: { type: "string", unique: true } }],
    });
    expect(created.status).toBe(200);
    const objectId = (created.body as { result: { schema: { id: string } } }).result.schema.id;

    const answers = await Promise.all([
      ...[1, 2, 3].map((n) =>
        admin("POST", "/custom/standalone/fields", {
          schemaName: "Racing",
          name: `Extra${n}`,
          column: { type: "string", maxLength: 10, unique: n === 2 },
        }),
      ),
      admin("DELETE", `/custom/standalone/schema/${objectId}`),
      graphql("{ racing { edges { node { UID Code } } } }"),
      graphql(`mutation { schema { insertRacing(input: {Code: "r${round}"}) } }`),
    ]);
    for (const { status, body } of answers) {
      const answer = { status, codes: errorCodes(body), body };
      expect({ answer, documented: [200, 400, 404, 409].includes(status) }).toMatchObject({
        documented: true,
      });
      if (status !== 200)
        expect(body).toMatchObject({ errorType: expect.any(String), message: expect.any(String) });
      expect({ answer, internal: answer.codes.some((code) => code?.startsWith("INTERNAL")) }).toMatchObject({
        internal: false,
      });
    }
    expect(answers[3]?.status).toBe(200);

    // Nothing of the object is left: no field of it listed, and its name can be used again.
    const listed = (await admin("GET", "/custom/schemas")).body as { result: { name: string }[] };
    expect(JSON.stringify(listed)).not.toContain("Racing");
    const catalogue = await t.catalogues.get(acme.tenant.id);
    expect(catalogue.objects.some((object) => object.name === "Racing")).toBe(false);
  }
});
