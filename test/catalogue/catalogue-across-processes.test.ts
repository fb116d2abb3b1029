/**
 * A catalogue change made through one API process is seen by the next request
 * to another one, though that process answers queries it reads whole with the
 * catalogue it last read, unchecked (graphql-service.ts `readWhole`): the read
 * checks the version itself, and any other outcome is answered again with the
 * catalogue checked. Two apps on one store stand for two processes; `b` has
 * read the catalogue before `a` changes it. Not on SQLite: one process owns
 * its file (SPEC §10); a second app on it read the field added again as null,
 * before this change as after.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { testEngine } from "../support/test-store.ts";

const severalProcesses = testEngine() !== "sqlite";

let a: TestApp;
let b: TestApp;
let acme: ProvisionedTenant;
let north: string;
beforeAll(async () => {
  if (!severalProcesses) return;
  a = await createTestApp({ LOG_LEVEL: "error" });
  b = await createTestApp({ ...a.storeEnv, LOG_LEVEL: "error" });
  acme = await a.provision("acme");
  const created = await graphql(
    a,
    `mutation { schema { insertRegions(input: {Name: "North", Timezone: "UTC"}) } }`,
  );
  expect(created.errors).toBeUndefined();
  north = (created.data as unknown as { schema: { insertRegions: string } }).schema.insertRegions;
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

async function graphql(app: TestApp, query: string) {
  const { status, body } = await app.call("POST", "/graphql/graphql", {
    token: acme.adminToken,
    body: { query },
  });
  expect(status).toBe(200);
  return body as {
    data?: { regions: { edges: { node: Record<string, unknown> }[] } };
    errors?: { extensions: { code: string } }[];
  };
}

const addField = async (name: string, type: string) => {
  const added = await a.call("POST", "/custom/standalone/fields", {
    token: acme.adminToken,
    body: { schemaName: "Regions", name, column: { type } },
  });
  expect(added.status).toBe(200);
  return (added.body as { result: { id: string } }).result.id;
};
const addShortName = (type: string) => addField("ShortName", type);
const deleteField = async (id: string) =>
  expect((await a.call("DELETE", `/custom/standalone/field/${id}`, { token: acme.adminToken })).status).toBe(
    200,
  );

const REGIONS = "{ regions { edges { node { Name } } } }";
const WITH_SHORT_NAME = "{ regions { edges { node { Name ShortName } } } }";

test.if(severalProcesses)(
  "a field another process added is queried at once, and one it deleted is refused at once",
  async () => {
    // `b` reads the catalogue (and keeps it) before the change.
    // Twice: a document without variables is kept (and so tried unchecked) from its second sighting.
    for (const _ of [1, 2])
      expect((await graphql(b, REGIONS)).data?.regions.edges).toEqual([{ node: { Name: "North" } }]);
    const fieldId = await addShortName("string");

    // A query valid under either catalogue, tried with the one `b` kept: the same answer.
    expect((await graphql(b, REGIONS)).data?.regions.edges).toEqual([{ node: { Name: "North" } }]);

    const withField = await graphql(b, WITH_SHORT_NAME);
    expect(withField.errors).toBeUndefined();
    expect(withField.data?.regions.edges).toEqual([{ node: { Name: "North", ShortName: null } }]);

    await deleteField(fieldId);
    const refused = await graphql(b, WITH_SHORT_NAME);
    expect(refused.data).toBeUndefined();
    expect(refused.errors?.map((e) => e.extensions.code)).toEqual(["GRAPHQL_VALIDATION_FAILED"]);
  },
);

test.if(severalProcesses)(
  "a field deleted and added again with another type is read in its new type",
  async () => {
    // `b` keeps a catalogue where ShortName is a string; the store's ShortName becomes a datetime in
    // the same column. Read with the catalogue kept, the column's number would be printed as is.
    const asString = await addShortName("string");
    // Twice: a document without variables is kept (and so tried unchecked) from its second sighting.
    for (const _ of [1, 2]) expect((await graphql(b, WITH_SHORT_NAME)).errors).toBeUndefined();
    await deleteField(asString);
    await addShortName("datetime");
    const updated = await graphql(
      a,
      `mutation { schema { updateRegions(input: {UID: "${north}", ShortName: "2024-05-01T12:00:00Z"}) } }`,
    );
    expect(updated.errors).toBeUndefined();

    const read = await graphql(b, WITH_SHORT_NAME);
    expect(read.errors).toBeUndefined();
    expect(read.data?.regions.edges).toEqual([
      { node: { Name: "North", ShortName: "2024-05-01T12:00:00.000Z" } },
    ]);
  },
);

test.if(severalProcesses)(
  "a mutation another process's change made stale is answered on the new catalogue, never written on the old",
  async () => {
    // `b` keeps a catalogue where Nickname is a string, and the mutation's document (seen twice).
    const asString = await addField("Nickname", "string");
    // Values in variables, as clients send them: one document, kept by `b` from its second sighting.
    const write = async (value: string) => {
      const { status, body } = await b.call("POST", "/graphql/graphql", {
        token: acme.adminToken,
        body: {
          query:
            "mutation ($uid: ID!, $v: String) { schema { updateRegions(input: {UID: $uid, Nickname: $v}) } }",
          variables: { uid: north, v: value },
        },
      });
      expect(status).toBe(200);
      return body as { errors?: { extensions: { code: string } }[] };
    };
    for (const value of ["one", "two"]) expect((await write(value)).errors).toBeUndefined();

    // Deleted by `a`: the document is refused at once, as a document naming an unknown field.
    await deleteField(asString);
    const refused = await write("three");
    expect(refused.errors?.map((e) => e.extensions.code)).toEqual(["GRAPHQL_VALIDATION_FAILED"]);

    // Added again as a string, the document kept again by `b`; then, unseen by `b`, deleted and added
    // again as a datetime. `b` first tries the kept document on its kept catalogue; the store refuses
    // that write (another version), and the request is answered again on the new catalogue, whose
    // type refuses the string: a validation error, not the conflict, and nothing written.
    const again = await addField("Nickname", "string");
    for (const value of ["four", "five"]) expect((await write(value)).errors).toBeUndefined();
    await deleteField(again);
    await addField("Nickname", "datetime");
    const wrongType = await write("12345");
    expect(wrongType.errors?.map((e) => e.extensions.code)).toEqual(["GRAPHQL_VALIDATION_FAILED"]);
    const read = await graphql(a, "{ regions { edges { node { Name Nickname } } } }");
    expect(read.data?.regions.edges).toEqual([{ node: { Name: "North", Nickname: null } }]);
  },
);
