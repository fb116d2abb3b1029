// @test-engines postgres: it meets PostgreSQL's row size limit, which no other engine has
/**
 * A record of an object at the field limit (500 `string` fields), each long enough to be moved out of
 * the row, passes PostgreSQL's 8160 bytes a row: each long value still leaves an 18-byte pointer in
 * it. The write is refused as LIMIT_EXCEEDED naming the object (never INTERNAL), and nothing of it is
 * written; a narrower record of the same object is stored.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../../support/app.ts";
import { graphqlClient } from "../../support/graphql.ts";

const FIELDS = 500;

let t: TestApp;
let acme: ProvisionedTenant;
let gql: ReturnType<typeof graphqlClient>;
beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: "error" });
  acme = await t.provision("acme");
  gql = graphqlClient(t, acme.adminToken);
  const created = await t.call("POST", "/custom/standalone/schemas", {
    token: acme.adminToken,
    body: {
      name: "Wide",
      fields: Array.from({ length: FIELDS }, (_, i) => ({ name: `F${i}`, column: { type: "string" } })),
    },
  });
  expect(created.status).toBe(200);
});
afterAll(() => t.close());

const letters = (length: number, seed: number) =>
  Array.from({ length }, (_, i) => String.fromCharCode(97 + ((seed * 31 + i * 7 + i * i) % 26))).join("");
const INSERT = "mutation ($input: NewWide!) { schema { insertWide(input: $input) } }";
const count = async () =>
  ((await gql("{ wide { totalCount } }")).data as { wide: { totalCount: number } }).wide.totalCount;

test("a record of 500 long strings is LIMIT_EXCEEDED naming the object and PostgreSQL's row limit; nothing is written", async () => {
  const input = Object.fromEntries(Array.from({ length: FIELDS }, (_, i) => [`F${i}`, letters(255, i)]));
  const answer = await gql(INSERT, { input });
  expect(answer.errors?.[0]?.extensions.code).toBe("LIMIT_EXCEEDED");
  expect(answer.errors?.[0]?.message).toContain("Wide: the record is too big for PostgreSQL");
  expect(answer.errors?.[0]?.message).toContain("at most about 8 KB per row");
  expect(await count()).toBe(0);
});

test("the same object's record with short values is stored", async () => {
  const input = Object.fromEntries(Array.from({ length: FIELDS }, (_, i) => [`F${i}`, letters(8, i)]));
  const answer = await gql(INSERT, { input });
  expect(answer.errors).toBeUndefined();
  expect(await count()).toBe(1);
});
