import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../../support/app.ts";
import { changeLog, graphqlClient, storedRecords } from "../../support/graphql.ts";

let t: TestApp;
let acme: ProvisionedTenant;
let gql: ReturnType<typeof graphqlClient>;
let regionId = "";

beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: "error" });
  acme = await t.provision("acme");
  gql = graphqlClient(t, acme.adminToken);
  const created = await t.call("POST", "/custom/standalone/schemas", {
    token: acme.adminToken,
    body: {
      name: "CustomExternalObject",
      fields: [{ name: "ExternalId", column: { type: "string", unique: true } }],
    },
  });
  expect(created.status).toBe(200);
  const field = await t.call("POST", "/custom/standalone/fields", {
    token: acme.adminToken,
    body: {
      schemaName: "Contacts",
      name: "CustomExternalObj",
      column: { type: "reference", referenceSchemaName: "CustomExternalObject" },
    },
  });
  expect(field.status).toBe(200);
  const region = await gql(
    `mutation { schema { insertRegions(input: {Name: "North", Timezone: "Europe/London"}) } }`,
  );
  if (!region.data) throw new Error(JSON.stringify(region));
  regionId = (region.data.schema as { insertRegions: string }).insertRegions;
});
afterAll(() => t.close());

const SEED = `mutation {
  schema {
    id1: upsertCustomExternalObject(input: {ExternalId: "ext-1"}, keyField: "ExternalId", idAlias: "ext1")
    id2: upsertCustomExternalObject(input: {ExternalId: "ext-2"}, keyField: "ExternalId", idAlias: "ext2")
    contactId1: insertContacts(input: {LastName: "Lovelace", FirstName: "Ada", CustomExternalObjId: "ext1"})
  }
}`;

describe("the seed's §4.3 example", () => {
  test("upserts with idAlias and a contact pointing at one of them, in one mutation", async () => {
    const first = await gql(SEED);
    expect(first.errors).toBeUndefined();
    const { id1, id2, contactId1 } = (first.data as { schema: Record<string, string> }).schema;
    expect(new Set([id1, id2, contactId1]).size).toBe(3);
    const [contact] = await storedRecords(t, acme.tenant.id, "Contacts", [contactId1 as string]);
    expect(contact).toMatchObject({
      LastName: "Lovelace",
      FullName: "Ada Lovelace",
      CustomExternalObj: id1,
      CreatedBy: acme.admin.id,
    });

    const queried = await gql(
      `{ contacts { edges { node { UID LastName CustomExternalObj { ExternalId } } } } }`,
    );
    expect(queried.data).toEqual({
      contacts: {
        edges: [
          { node: { UID: contactId1, LastName: "Lovelace", CustomExternalObj: { ExternalId: "ext-1" } } },
        ],
      },
    });

    const [before] = await storedRecords(t, acme.tenant.id, "CustomExternalObject", [id1 as string]);

    await Bun.sleep(5);
    const again = await gql(SEED.replace(/contactId1: .*\n/, ""));
    expect(again.errors).toBeUndefined();
    expect(again.data?.schema).toEqual({ id1, id2 });
    const [after] = await storedRecords(t, acme.tenant.id, "CustomExternalObject", [id1 as string]);
    expect(after?.UID).toBe(id1);
    expect(after?.CreatedDate).toBe(before?.CreatedDate as number);
    expect(after?.LastModifiedDate as number).toBeGreaterThan(before?.LastModifiedDate as number);
  });
});

// The write itself (atomicity, the change log, validation, idAliases) is the record-write engine's,
// tested in test/records/write-records.test.ts; here, how GraphQL plans it and answers its outcome.
describe("an operation's failure in GraphQL", () => {
  test("answers at the operation's path with its code and details; the first two leave no trace", async () => {
    const logBefore = (await changeLog(t, acme.tenant.id)).length;
    const result = await gql(`mutation { schema {
      a: insertAccounts(input: {Name: "Kept?"}, idAlias: "acc")
      b: insertContacts(input: {LastName: "Nobody", AccountId: "acc"})
      c: insertJobs(input: {Duration: 30})
    } }`);
    expect(result.data).toBeNull();
    expect(result.errors?.[0]?.path).toEqual(["schema", "c"]);
    expect(result.errors?.[0]?.extensions.code).toBe("VALIDATION_FAILED");
    // Named as the input names it: a reference is given by its <Name>Id.
    expect(result.errors?.[0]?.message).toContain("RegionId is required");
    expect(result.errors?.[0]?.extensions.details).toContainEqual({
      path: "RegionId",
      message: "is required",
    });
    expect((await changeLog(t, acme.tenant.id)).length).toBe(logBefore);
  });
});

describe("several `schema` roots are one unit of work", () => {
  const descriptions = async () =>
    (await changeLog(t, acme.tenant.id))
      .filter((entry) => entry.objectName === "Jobs")
      .map((entry) => entry.after?.Description);

  test("a failing second root leaves nothing of the first: no row, no change-log entry", async () => {
    // Each root used to commit on its own: the first half was written (and its webhook fired).
    const logBefore = (await changeLog(t, acme.tenant.id)).length;
    const result = await gql(`mutation {
      a: schema { first: insertJobs(input: {Duration: 10, RegionId: "${regionId}", Description: "half one"}) }
      b: schema { second: insertJobs(input: {Duration: 10}) }
    } `);
    expect(result.data).toBeNull();
    expect(result.errors).toHaveLength(1);
    expect(result.errors?.[0]?.path).toEqual(["b", "second"]);
    expect(result.errors?.[0]?.extensions.code).toBe("VALIDATION_FAILED");
    expect((await changeLog(t, acme.tenant.id)).length).toBe(logBefore);
    const written = await gql(`{ jobs(filter: "Description == 'half one'") { totalCount } }`);
    expect(written.data).toEqual({ jobs: { totalCount: 0 } });
  });

  test("valid roots commit together, in order, under one mutation id; idAliases reach across roots", async () => {
    const logBefore = (await changeLog(t, acme.tenant.id)).length;
    const result = await gql(
      `mutation ($skip: Boolean!) {
      a: schema { job: insertJobs(input: {Duration: 10, RegionId: "${regionId}", Description: "root a"}, idAlias: "j") }
      ...More
      c: schema @skip(if: $skip) { job: insertJobs(input: {Duration: 10, RegionId: "${regionId}", Description: "skipped"}) }
    }
    fragment More on Mutation {
      b: schema { job: updateJobs(input: {UID: "j", Description: "root b"}) }
    }`,
      { skip: true },
    );
    expect(result.errors).toBeUndefined();
    const { a, b } = result.data as { a: { job: string }; b: { job: string } };
    expect(b.job).toBe(a.job);
    expect(result.data).not.toHaveProperty("c");
    const entries = (await changeLog(t, acme.tenant.id)).slice(logBefore);
    expect(entries.map((e) => `${e.operation}:${e.after?.Description}`)).toEqual([
      "INSERT:root a",
      "UPDATE:root b",
    ]);
    expect(new Set(entries.map((e) => e.mutationId)).size).toBe(1);
    expect(await descriptions()).not.toContain("skipped");
  });

  test("the same operation alias under two roots answers in each", async () => {
    const result = await gql(`mutation {
      a: schema { x: insertRegions(input: {Name: "East", Timezone: "UTC"}) }
      b: schema { x: insertRegions(input: {Name: "West", Timezone: "UTC"}) }
    }`);
    expect(result.errors).toBeUndefined();
    const { a, b } = result.data as { a: { x: string }; b: { x: string } };
    expect(a.x).not.toBe(b.x);
    const stored = await storedRecords(t, acme.tenant.id, "Regions", [a.x, b.x]);
    expect(stored.map((region) => region.Name).sort()).toEqual(["East", "West"]);
  });
});

describe("validation by the schema", () => {
  const expectError = async (document: string, code: string, text?: string) => {
    const result = await gql(document);
    expect(result.data ?? null).toBeNull();
    expect(result.errors?.[0]?.extensions.code).toBe(code);
    if (text) expect(result.errors?.[0]?.message).toContain(text);
  };
  test("read-only fields are not inputs", () =>
    expectError(
      `mutation { schema { insertJobs(input: {Duration: 1, RegionId: "${regionId}", Name: "JOB-9"}) } }`,
      "GRAPHQL_VALIDATION_FAILED",
    ));
  test("bad scalars", () =>
    expectError(
      `mutation { schema { insertJobs(input: {Duration: -5, RegionId: "${regionId}"}) } }`,
      "GRAPHQL_VALIDATION_FAILED",
      "minutes",
    ));
});
