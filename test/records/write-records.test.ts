/**
 * The record-write engine against a real store, without GraphQL: operations in, UIDs out, one unit
 * of work, the change log written with it; the first failure names its operation and writes nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Catalogue, ObjectDef } from "../../api/model/catalogue.ts";
import {
  OperationFailure,
  type RecordOperation,
  type WriteContext,
} from "../../api/records/record-operation.ts";
import { writeRecords } from "../../api/records/write-records.ts";
import type { Store } from "../../api/store/store.ts";
import { CatalogueChangedError } from "../../common/errors.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { partitionOf } from "../support/change-log.ts";
import { changeLog, storedRecords } from "../support/graphql.ts";

let t: TestApp;
let acme: ProvisionedTenant;
let catalogue: Catalogue;
let regionId = "";

const object = (name: string) => catalogue.objects.find((o) => o.name === name) as ObjectDef;
const context = (): WriteContext => ({
  tenantId: acme.tenant.id,
  userId: acme.admin.id,
  mutationId: Bun.randomUUIDv7(),
  now: Date.now(),
});
const write = (...operations: RecordOperation[]) => writeRecords(t.store, catalogue, context(), operations);
const insert = (name: string, input: Record<string, unknown>, idAlias?: string): RecordOperation => ({
  kind: "insert",
  object: object(name),
  input,
  idAlias,
});
const update = (name: string, input: Record<string, unknown>): RecordOperation => ({
  kind: "update",
  object: object(name),
  input,
});
const upsert = (name: string, input: Record<string, unknown>, keyField: string): RecordOperation => ({
  kind: "upsert",
  object: object(name),
  input,
  keyField,
});
const remove = (name: string, uid: string): RecordOperation => ({
  kind: "delete",
  object: object(name),
  input: null,
  uid,
});

/** Records per object and change-log entries: a refused write must change none of them. */
const footprint = async () => {
  const counts: Record<string, number> = {};
  for (const name of ["Regions", "Accounts", "Contacts", "Jobs", "CustomExternalObject"])
    counts[name] = await t.store.countRecords(acme.tenant.id, object(name), null, Date.now());
  return { counts, log: (await changeLog(t, acme.tenant.id)).length };
};

/** Runs `operations`, expects operation `index` to fail with `code`, and nothing to be written. */
const refused = async (operations: RecordOperation[], index: number, code: string) => {
  const before = await footprint();
  const failure = await write(...operations).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(OperationFailure);
  expect((failure as OperationFailure).index).toBe(index);
  const error = (failure as OperationFailure).error as { code: string; message: string; details?: unknown };
  expect(error.code).toBe(code);
  expect(await footprint()).toEqual(before);
  return error;
};

beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: "error" });
  acme = await t.provision("acme");
  const created = await t.call("POST", "/custom/standalone/schemas", {
    token: acme.adminToken,
    body: {
      name: "CustomExternalObject",
      fields: [{ name: "ExternalId", column: { type: "string", unique: true } }],
    },
  });
  expect(created.status).toBe(200);
  catalogue = await t.catalogues.get(acme.tenant.id);
  [regionId = ""] = (await write(
    insert("Regions", { Name: "North", Timezone: "Europe/London" }),
  )) as string[];
});
afterAll(() => t.close());

describe("one write is one unit of work, logged in the change log", () => {
  test("a failing third operation leaves no trace of the first two", async () => {
    const error = await refused(
      [
        insert("Accounts", { Name: "Kept?" }, "acc"),
        insert("Contacts", { LastName: "Nobody", AccountId: "acc" }),
        insert("Jobs", { Duration: 30 }),
      ],
      2,
      "validation_failed",
    );
    // Named as the input names it: a reference is given by its <Name>Id.
    expect(error.message).toContain("RegionId is required");
    expect(error.details).toContainEqual({ path: "RegionId", message: "is required" });
  });

  test("each changed record is logged once, in order, with before and after; a no-op update logs nothing", async () => {
    const [resourceId] = await write(insert("Resources", { Name: "Van", PrimaryRegionId: regionId }));
    const logBefore = (await changeLog(t, acme.tenant.id)).length;
    const [jobId] = await write(
      insert("Jobs", { Duration: 60, RegionId: regionId, Description: "Fix" }, "j"),
      insert("JobAllocations", { JobId: "j", ResourceId: resourceId }),
      update("Jobs", { UID: "j", Description: "Fix" }),
      update("Jobs", { UID: "j", Description: "Fix the boiler" }),
    );
    const entries = (await changeLog(t, acme.tenant.id)).slice(logBefore);
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
      CreatedBy: acme.admin.id,
    });
    expect(entries[2]?.after?.JobAllocationCount).toBe(1);
    expect(entries[3]?.before?.Description).toBe("Fix");
    expect(entries[3]?.after?.Description).toBe("Fix the boiler");
    // The mutation's entries are contiguous in the tenant's partition of the log, in the order it made them.
    const log = (await t.store.readChanges(partitionOf(t.store, acme.tenant.id), null, 100_000)).entries;
    const at = log.findIndex((e) => e.mutationId === entries[0]?.mutationId);
    expect(log.slice(at, at + entries.length)).toEqual(entries);
    expect(entries.map((e) => e.sequence)).toEqual(entries.map((_, i) => i));
    const [job] = await storedRecords(t, acme.tenant.id, "Jobs", [jobId as string]);
    expect(job?.JobAllocationCount).toBe(1);
  });

  test("an upsert finds its record by the key field: the second one updates", async () => {
    const [first] = await write(upsert("CustomExternalObject", { ExternalId: "up-1" }, "ExternalId"));
    const [second] = await write(upsert("CustomExternalObject", { ExternalId: "up-1" }, "ExternalId"));
    expect(second).toBe(first as string);
  });

  test("an upsert reaches its key once: insert or nothing answers the record holding it; no branch checks it again", async () => {
    // The real store, its units of work's reads and insert-or-nothing of a key counted by field.
    const lookups: string[] = [];
    const counted: Store = {
      ...t.store,
      unitOfWork: (work) =>
        t.store.unitOfWork((tx) =>
          work({
            ...tx,
            findRecordByValue: (tenantId, object, field, value, exceptUid) => {
              lookups.push(`find ${field.name}`);
              return tx.findRecordByValue(tenantId, object, field, value, exceptUid);
            },
            insertUnlessTaken: (tenantId, object, values, key) => {
              lookups.push(`insert unless ${key.name}`);
              return tx.insertUnlessTaken(tenantId, object, values, key);
            },
          }),
        ),
    };
    const operation = upsert("CustomExternalObject", { ExternalId: "up-once" }, "ExternalId");
    const [inserted] = await writeRecords(counted, catalogue, context(), [operation]);
    expect(lookups).toEqual(["insert unless ExternalId"]);
    // The same key again: nothing inserted, the record holding the key (the first upsert's) is
    // answered and updated; the value it holds already is not looked up again.
    const [again] = await writeRecords(counted, catalogue, context(), [operation]);
    expect(again).toBe(inserted as string);
    expect(lookups).toEqual(["insert unless ExternalId", "insert unless ExternalId"]);
  });
});

describe("an insert with the UID its caller chose (a user's record has the user's id)", () => {
  test("the record gets it", async () => {
    const uid = crypto.randomUUID();
    expect(await write({ ...insert("Accounts", { Name: "Chosen" }), uid })).toEqual([uid]);
    expect((await storedRecords(t, acme.tenant.id, "Accounts", [uid]))[0]?.Name).toBe("Chosen");
  });
  test("a UID taken is unique_violation; no UID at all, validation_failed; nothing written", async () => {
    const [taken] = await write(insert("Accounts", { Name: "First" }));
    await refused(
      [{ ...insert("Accounts", { Name: "Second" }), uid: taken as string }],
      0,
      "unique_violation",
    );
    await refused([{ ...insert("Accounts", { Name: "Third" }), uid: "acc-1" }], 0, "validation_failed");
  });
});

describe("validation", () => {
  test("maxLength is enforced, never truncated", async () => {
    const error = await refused(
      [insert("Regions", { Name: "x", Timezone: "UTC", CountryCode: "GBR" })],
      0,
      "validation_failed",
    );
    expect(error.message).toContain("at most 2");
  });
  test("picklist values", async () => {
    const error = await refused(
      [insert("Jobs", { Duration: 1, RegionId: regionId, JobStatus: "Lost" })],
      0,
      "validation_failed",
    );
    expect(error.message).toContain("not one of");
  });
  test("End before Start", async () => {
    const start = Date.parse("2024-05-01T10:00:00Z");
    const error = await refused(
      [insert("Jobs", { Duration: 1, RegionId: regionId, Start: start, End: start - 3_600_000 })],
      0,
      "validation_failed",
    );
    expect(error.message).toContain("End must be at or after Start");
  });
  test("references must exist, the error naming the input's member", async () => {
    // The store checks it in the write; the error names the field as the input does (RegionId).
    const region = crypto.randomUUID();
    const error = await refused(
      [insert("Jobs", { Duration: 1, RegionId: region })],
      0,
      "reference_not_found",
    );
    const message = `no Regions record with UID '${region}'`;
    expect(error.message).toBe(`Jobs.RegionId: ${message}`);
    expect(error.details).toEqual([{ path: "RegionId", message }]);
  });
  test("unique violations name the field", async () => {
    await write(insert("CustomExternalObject", { ExternalId: "u-1" }));
    const error = await refused(
      [insert("CustomExternalObject", { ExternalId: "u-1" })],
      0,
      "unique_violation",
    );
    expect(error.message).toContain("ExternalId");
  });
  test("upsert keyField must be an upsert key", async () => {
    const error = await refused([upsert("Contacts", { LastName: "x" }, "LastName")], 0, "invalid_key_field");
    expect(error.message).toContain("valid keys");
  });
  test("duplicate idAlias", async () => {
    const error = await refused(
      [insert("Accounts", { Name: "a" }, "x"), insert("Accounts", { Name: "b" }, "x")],
      1,
      "validation_failed",
    );
    expect(error.message).toContain("defined twice");
  });
  test("update of a missing record", () =>
    refused([update("Accounts", { UID: crypto.randomUUID(), Name: "x" })], 0, "not_found"));
  test("delete of a missing record answers null; of a referenced one, an error", async () => {
    expect(await write(remove("Accounts", crypto.randomUUID()))).toEqual([null]);
    const error = await refused([remove("Regions", regionId)], 0, "validation_failed");
    expect(error.message).toContain("still referenced");
  });
});

describe("an idAlias stands only for a record of its own object", () => {
  const mismatched = async (operations: RecordOperation[], code: string, path: string) => {
    const error = await refused(operations, 1, code);
    // The message names the alias, the object it names and the object expected.
    expect(error.message).toContain("idAlias 'c1' names a record of Contacts");
    expect(error.details).toEqual([{ path, message: expect.stringContaining("'c1'") }]);
    return error.message;
  };

  test("an alias of its own object's record is a reference to it", async () => {
    const [region, job] = await write(
      insert("Regions", { Name: "Aliased", Timezone: "UTC" }, "r1"),
      insert("Jobs", { Duration: 5, RegionId: "r1" }, "j1"),
    );
    const [stored] = await storedRecords(t, acme.tenant.id, "Jobs", [job as string]);
    expect(stored?.Region).toBe(region as string);
  });

  test("a reference to an alias of another object's record is reference_not_found; nothing written", async () => {
    const message = await mismatched(
      [
        insert("Contacts", { LastName: "Not a region" }, "c1"),
        insert("Jobs", { Duration: 5, RegionId: "c1" }),
      ],
      "reference_not_found",
      "RegionId",
    );
    expect(message).toContain("Jobs.RegionId");
    expect(message).toContain("a record of Regions is expected");
  });

  test("an update's UID given as an alias of another object's record is validation_failed", () =>
    mismatched(
      [insert("Contacts", { LastName: "Not a job" }, "c1"), update("Jobs", { UID: "c1", Description: "x" })],
      "validation_failed",
      "UID",
    ));

  test("a delete's UID given as an alias of another object's record is validation_failed, not a silent null", async () => {
    const message = await mismatched(
      [insert("Contacts", { LastName: "Not an account" }, "c1"), remove("Accounts", "c1")],
      "validation_failed",
      "UID",
    );
    expect(message).toContain("a record of Accounts is expected");
  });

  test("neither a UID nor an alias defined earlier is unknown_id_alias", () =>
    refused([insert("Jobs", { Duration: 5, RegionId: "nowhere" })], 0, "unknown_id_alias"));

  test("a reference to an alias whose record an earlier operation deleted is reference_not_found", () =>
    refused(
      [
        insert("Regions", { Name: "Short-lived", Timezone: "UTC" }, "r1"),
        remove("Regions", "r1"),
        insert("Jobs", { Duration: 5, RegionId: "r1" }),
      ],
      2,
      "reference_not_found",
    ));
});

describe("the standard behaviours, applied by the engine", () => {
  const stored = async (name: string, uid: string | null | undefined) =>
    (await storedRecords(t, acme.tenant.id, name, [uid as string]))[0];
  const number = (name: unknown) => Number(String(name).replace(/^\D+-/, ""));

  test("a job and an allocation get the next names of their own sequences", async () => {
    const [jobA, allocation, jobB] = await write(
      insert("Jobs", { Duration: 5, RegionId: regionId }, "ja"),
      insert("JobAllocations", { JobId: "ja", ResourceId: await resource() }),
      insert("Jobs", { Duration: 5, RegionId: regionId }),
    );
    const [a, b] = [await stored("Jobs", jobA), await stored("Jobs", jobB)];
    expect(a?.Name).toMatch(/^JOB-\d{4}$/);
    expect(number(b?.Name)).toBe(number(a?.Name) + 1);
    expect((await stored("JobAllocations", allocation))?.Name).toMatch(/^JA-\d{4}$/);
  });

  test("Contacts.FullName follows FirstName and LastName on update", async () => {
    const [contact] = await write(insert("Contacts", { FirstName: "Ada", LastName: "Byron" }));
    expect((await stored("Contacts", contact))?.FullName).toBe("Ada Byron");
    await write(update("Contacts", { UID: contact, LastName: "Lovelace" }));
    expect((await stored("Contacts", contact))?.FullName).toBe("Ada Lovelace");
    await write(update("Contacts", { UID: contact, FirstName: null }));
    expect((await stored("Contacts", contact))?.FullName).toBe("Lovelace");
  });

  test("Jobs.JobAllocationCount follows its allocations: deleted status, a move, a delete", async () => {
    const resourceId = await resource();
    const [jobA, jobB, first, second] = await write(
      insert("Jobs", { Duration: 5, RegionId: regionId }, "a"),
      insert("Jobs", { Duration: 5, RegionId: regionId }, "b"),
      insert("JobAllocations", { JobId: "a", ResourceId: resourceId }),
      insert("JobAllocations", { JobId: "a", ResourceId: resourceId }),
    );
    const counts = async () => [
      (await stored("Jobs", jobA))?.JobAllocationCount,
      (await stored("Jobs", jobB))?.JobAllocationCount,
    ];
    expect(await counts()).toEqual([2, 0]);
    await write(update("JobAllocations", { UID: first, Status: "Deleted" }));
    expect(await counts()).toEqual([1, 0]);
    await write(update("JobAllocations", { UID: second, JobId: jobB }));
    expect(await counts()).toEqual([0, 1]);
    await write(remove("JobAllocations", second as string));
    expect(await counts()).toEqual([0, 0]);
  });

  test("Availabilities: Finish must be after Start", async () => {
    const error = await refused(
      [insert("Availabilities", { ResourceId: await resource(), Start: 1_000, Finish: 1_000 })],
      0,
      "validation_failed",
    );
    expect(error.details).toEqual([{ path: "Finish", message: "must be after Start" }]);
  });

  test.each([
    ["a generated name", "Jobs", { Name: "JOB-9" }, "Name"],
    ["a count", "Jobs", { JobAllocationCount: 99 }, "JobAllocationCount"],
    ["a derived field", "Contacts", { LastName: "x", FullName: "Someone Else" }, "FullName"],
    ["a system field", "Contacts", { LastName: "x", CreatedBy: crypto.randomUUID() }, "CreatedBy"],
    ["a member the object lacks", "Contacts", { LastName: "x", Shoe: "9" }, "Shoe"],
  ])("%s is refused as input; nothing written", async (_case, name, values, member) => {
    const input = name === "Jobs" ? { Duration: 5, RegionId: regionId, ...values } : values;
    const error = await refused([insert(name, input)], 0, "validation_failed");
    expect(error.details).toEqual([{ path: member, message: expect.any(String) }]);
  });
});

/** A new resource's UID (allocations and availabilities need one). */
async function resource(): Promise<string> {
  const [uid] = await write(insert("Resources", { Name: "Crew", PrimaryRegionId: regionId }));
  return uid as string;
}

describe("a write runs only on the catalogue it was made for", () => {
  test("after another request changed the catalogue: CatalogueChangedError (conflict), nothing written; on the new one, written", async () => {
    const stale = catalogue;
    const added = await t.call("POST", "/custom/standalone/fields", {
      token: acme.adminToken,
      body: { schemaName: "Regions", name: "ShortCode", column: { type: "string" } },
    });
    expect(added.status).toBe(200);
    const before = await footprint();
    const failure = await write(insert("Regions", { Name: "South", Timezone: "UTC" })).catch(
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(CatalogueChangedError);
    expect((failure as CatalogueChangedError).code).toBe("conflict");
    expect(await footprint()).toEqual(before);

    catalogue = await t.catalogues.get(acme.tenant.id);
    expect(catalogue.version).toBeGreaterThan(stale.version);
    expect(await write(insert("Regions", { Name: "South", Timezone: "UTC" }))).toHaveLength(1);
  });
});
