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

describe("atomicity and the change log", () => {
  test("a failing third operation leaves no trace of the first two", async () => {
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

  test("each changed record is logged once, in order, with before and after; a no-op update logs nothing", async () => {
    const logBefore = (await changeLog(t, acme.tenant.id)).length;
    const created = await gql(`mutation { schema {
      job: insertJobs(input: {Duration: 60, RegionId: "${regionId}", Description: "Fix"}, idAlias: "j")
      alloc: insertJobAllocations(input: {JobId: "j", ResourceId: "r"})
    } }`);
    expect(created.errors?.[0]?.extensions.code).toBe("UNKNOWN_ID_ALIAS");

    const resource = await gql(
      `mutation { schema { insertResources(input: {Name: "Van", PrimaryRegionId: "${regionId}"}) } }`,
    );
    const resourceId = (resource.data as { schema: Record<string, string> }).schema.insertResources;
    const ok = await gql(`mutation { schema {
      job: insertJobs(input: {Duration: 60, RegionId: "${regionId}", Description: "Fix"}, idAlias: "j")
      alloc: insertJobAllocations(input: {JobId: "j", ResourceId: "${resourceId}"})
      same: updateJobs(input: {UID: "j", Description: "Fix"})
      changed: updateJobs(input: {UID: "j", Description: "Fix the boiler"})
    } }`);
    expect(ok.errors).toBeUndefined();
    const jobId = (ok.data as { schema: Record<string, string> }).schema.job;
    const entries = (await changeLog(t, acme.tenant.id)).slice(logBefore + 1);
    expect(entries.map((e) => `${e.objectName}:${e.operation}:${e.sequence}`)).toEqual([
      "Jobs:INSERT:0",
      "JobAllocations:INSERT:1",
      "Jobs:UPDATE:2",
      "Jobs:UPDATE:3",
    ]);
    expect(new Set(entries.map((e) => e.mutationId)).size).toBe(1);
    expect(entries[0]?.after).toMatchObject({
      Name: expect.stringMatching(/^JOB-\d{4}$/),
      JobStatus: "Queued",
      Locked: false,
      // A count: a job without allocations has 0 of them, not an unknown number.
      JobAllocationCount: 0,
    });
    expect(entries[2]?.after?.JobAllocationCount).toBe(1);
    expect(entries[3]?.before?.Description).toBe("Fix");
    expect(entries[3]?.after?.Description).toBe("Fix the boiler");
    const positions = entries.map((e) => (e as { position: number }).position);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    const [job] = await storedRecords(t, acme.tenant.id, "Jobs", [jobId as string]);
    expect(job?.JobAllocationCount).toBe(1);
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

describe("validation", () => {
  const expectError = async (document: string, code: string, text?: string) => {
    const result = await gql(document);
    expect(result.data ?? null).toBeNull();
    expect(result.errors?.[0]?.extensions.code).toBe(code);
    if (text) expect(result.errors?.[0]?.message).toContain(text);
  };

  test("maxLength is enforced, never truncated", () =>
    expectError(
      `mutation { schema { insertRegions(input: {Name: "x", Timezone: "UTC", CountryCode: "GBR"}) } }`,
      "VALIDATION_FAILED",
      "at most 2",
    ));
  test("picklist values", () =>
    expectError(
      `mutation { schema { insertJobs(input: {Duration: 1, RegionId: "${regionId}", JobStatus: "Lost"}) } }`,
      "VALIDATION_FAILED",
      "not one of",
    ));
  test("End before Start", () =>
    expectError(
      `mutation { schema { insertJobs(input: {Duration: 1, RegionId: "${regionId}", Start: "2024-05-01T10:00:00Z", End: "2024-05-01T09:00:00Z"}) } }`,
      "VALIDATION_FAILED",
      "End must be at or after Start",
    ));
  test("references must exist", () =>
    expectError(
      `mutation { schema { insertJobs(input: {Duration: 1, RegionId: "${crypto.randomUUID()}"}) } }`,
      "REFERENCE_NOT_FOUND",
    ));
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
  test("unique violations name the field", async () => {
    await gql(`mutation { schema { insertCustomExternalObject(input: {ExternalId: "u-1"}) } }`);
    await expectError(
      `mutation { schema { insertCustomExternalObject(input: {ExternalId: "u-1"}) } }`,
      "UNIQUE_VIOLATION",
      "ExternalId",
    );
  });
  test("upsert keyField must be an upsert key", () =>
    expectError(
      `mutation { schema { upsertContacts(input: {LastName: "x"}, keyField: "LastName") } }`,
      "INVALID_KEY_FIELD",
      "valid keys",
    ));
  test("duplicate idAlias", () =>
    expectError(
      `mutation { schema { a: insertAccounts(input: {Name: "a"}, idAlias: "x") b: insertAccounts(input: {Name: "b"}, idAlias: "x") } }`,
      "VALIDATION_FAILED",
      "defined twice",
    ));
  test("update of a missing record", () =>
    expectError(
      `mutation { schema { updateAccounts(input: {UID: "${crypto.randomUUID()}", Name: "x"}) } }`,
      "NOT_FOUND",
    ));
  test("delete of a missing record answers null; of a referenced one, an error", async () => {
    const missing = await gql(`mutation { schema { deleteAccounts(UID: "${crypto.randomUUID()}") } }`);
    expect(missing.data?.schema).toEqual({ deleteAccounts: null });
    await expectError(
      `mutation { schema { deleteRegions(UID: "${regionId}") } }`,
      "VALIDATION_FAILED",
      "still referenced",
    );
  });
});

describe("an idAlias stands only for a record of its own object", () => {
  /** Records per object and change-log entries: a refused mutation must change none of them. */
  const footprint = async () => {
    const counts = await gql(`{
      regions { totalCount } contacts { totalCount } jobs { totalCount } accounts { totalCount }
    }`);
    return { counts: counts.data, log: (await changeLog(t, acme.tenant.id)).length };
  };
  const refused = async (document: string, code: string, path: string) => {
    const before = await footprint();
    const result = await gql(document);
    expect(result.data).toBeNull();
    const error = result.errors?.[0];
    expect(error?.extensions.code).toBe(code);
    // The message names the alias, the object it names and the object expected.
    expect(error?.message).toContain("idAlias 'c1' names a record of Contacts");
    expect(error?.extensions.details).toEqual([{ path, message: expect.stringContaining("'c1'") }]);
    expect(await footprint()).toEqual(before);
    return error?.message ?? "";
  };

  test("an alias of its own object's record is a reference to it", async () => {
    const result = await gql(`mutation { schema {
      a: insertRegions(input: {Name: "Aliased", Timezone: "UTC"}, idAlias: "r1")
      b: insertJobs(input: {Duration: 5, RegionId: "r1"}, idAlias: "j1")
    } }`);
    expect(result.errors).toBeUndefined();
    const { a, b } = (result.data as { schema: Record<string, string> }).schema;
    const [job] = await storedRecords(t, acme.tenant.id, "Jobs", [b as string]);
    expect(job?.Region).toBe(a as string);
  });

  test("a reference to an alias of another object's record is REFERENCE_NOT_FOUND; nothing written", async () => {
    const message = await refused(
      `mutation { schema {
        a: insertContacts(input: {LastName: "Not a region"}, idAlias: "c1")
        b: insertJobs(input: {Duration: 5, RegionId: "c1"})
      } }`,
      "REFERENCE_NOT_FOUND",
      "RegionId",
    );
    expect(message).toContain("Jobs.RegionId");
    expect(message).toContain("a record of Regions is expected");
  });

  test("an update's UID given as an alias of another object's record is VALIDATION_FAILED", async () => {
    await refused(
      `mutation { schema {
        a: insertContacts(input: {LastName: "Not a job"}, idAlias: "c1")
        b: updateJobs(input: {UID: "c1", Description: "x"})
      } }`,
      "VALIDATION_FAILED",
      "UID",
    );
  });

  test("a delete's UID given as an alias of another object's record is VALIDATION_FAILED, not a silent null", async () => {
    const message = await refused(
      `mutation { schema {
        a: insertContacts(input: {LastName: "Not an account"}, idAlias: "c1")
        b: deleteAccounts(UID: "c1")
      } }`,
      "VALIDATION_FAILED",
      "UID",
    );
    expect(message).toContain("a record of Accounts is expected");
  });

  test("a reference to an alias whose record an earlier operation deleted is REFERENCE_NOT_FOUND", async () => {
    const before = await footprint();
    const result = await gql(`mutation { schema {
      a: insertRegions(input: {Name: "Short-lived", Timezone: "UTC"}, idAlias: "r1")
      b: deleteRegions(UID: "r1")
      c: insertJobs(input: {Duration: 5, RegionId: "r1"})
    } }`);
    expect(result.data).toBeNull();
    expect(result.errors?.[0]?.path).toEqual(["schema", "c"]);
    expect(result.errors?.[0]?.extensions.code).toBe("REFERENCE_NOT_FOUND");
    expect(await footprint()).toEqual(before);
  });
});
