import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { buildSchema, type GraphQLObjectType } from "graphql";
import { CUSTOM_FIELD_TYPES } from "../../api/model/catalogue.ts";
import { stableId } from "../../api/model/field-factory.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { testEngine } from "../support/test-store.ts";

let t: TestApp;
let acme: ProvisionedTenant;
let globex: ProvisionedTenant;
beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: "error" });
  acme = await t.provision("acme");
  globex = await t.provision("globex");
});
afterAll(() => t.close());

const admin = (method: string, path: string, body?: unknown, tenant = acme) =>
  t.call(method, path, { token: tenant.adminToken, body });
const sdl = async (tenant = acme) =>
  (await t.call("GET", "/graphql/schema", { token: tenant.adminToken })).body as string;
const tables = () => {
  const db = new Database(join(t.dataDir, "store.sqlite"), { readonly: true });
  const names = db
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
    .all()
    .map((r) => r.name);
  db.close();
  return names;
};
const columnsOf = (table: string) => {
  const db = new Database(join(t.dataDir, "store.sqlite"), { readonly: true });
  const names = db
    .query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${table}')`)
    .all()
    .map((r) => r.name);
  db.close();
  return names;
};
/** The id of a custom field, looked up through the catalogue (standard fields are not listed). */
const sdlFieldId = async (object: string, field: string): Promise<string | undefined> => {
  const catalogue = await t.catalogues.get(acme.tenant.id);
  return catalogue.objects.find((o) => o.name === object)?.fields.find((f) => f.name === field && f.custom)
    ?.id;
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("the seed's example", () => {
  let objectId = "";

  test("POST /custom/standalone/schemas answers the seed's schema and field records", async () => {
    const { status, body } = await admin("POST", "/custom/standalone/schemas", {
      name: "CustomExternalObject",
      label: "Custom External Object",
      fields: [{ name: "ExternalId", column: { type: "string", unique: true } }],
    });
    expect(status).toBe(200);
    const { schema, fields } = body.result;
    expect(schema).toEqual({
      name: "CustomExternalObject",
      description: null,
      label: "Custom External Object",
      mapping: "__customexternalobject",
      id: expect.stringMatching(UUID),
    });
    objectId = schema.id;
    const common = {
      schemaName: "CustomExternalObject",
      label: null,
      description: null,
      precision: null,
      scale: null,
    };
    const system = { required: true, accessMode: "read_only", readOnly: true, maxLength: null };
    const none = { referenceSchemaName: null, referenceSchemaFieldName: null };
    expect(fields).toEqual([
      {
        id: expect.stringMatching(UUID),
        name: "UID",
        fieldType: "id",
        mapping: "uid",
        upsertKey: true,
        ...common,
        ...system,
        ...none,
      },
      {
        id: expect.stringMatching(UUID),
        name: "CreatedDate",
        fieldType: "datetime",
        mapping: "created_date",
        upsertKey: false,
        ...common,
        ...system,
        ...none,
      },
      {
        id: expect.stringMatching(UUID),
        name: "LastModifiedDate",
        fieldType: "datetime",
        mapping: "last_modified_date",
        upsertKey: false,
        ...common,
        ...system,
        ...none,
      },
      {
        id: expect.stringMatching(UUID),
        name: "CreatedBy",
        fieldType: "reference",
        mapping: "created_by",
        upsertKey: false,
        ...common,
        ...system,
        referenceSchemaName: "Users",
        referenceSchemaFieldName: "UID",
      },
      {
        id: expect.stringMatching(UUID),
        name: "LastModifiedBy",
        fieldType: "reference",
        mapping: "last_modified_by",
        upsertKey: false,
        ...common,
        ...system,
        referenceSchemaName: "Users",
        referenceSchemaFieldName: "UID",
      },
      {
        id: expect.stringMatching(UUID),
        name: "ExternalId",
        fieldType: "string",
        mapping: "__externalid",
        upsertKey: true,
        required: false,
        accessMode: "read_write",
        readOnly: false,
        maxLength: 255,
        ...common,
        ...none,
      },
    ]);
  });

  // SQLite only: it reads the SQLite file's own catalogue (sqlite_master, table_info); PostgreSQL's tables are checked by the conformance suite's catalogue tests.
  test.skipIf(testEngine() !== "sqlite")(
    "the object has a real table with a column per field and a unique index",
    () => {
      const table = tables().find((name) => name.endsWith("___customexternalobject"));
      expect(table).toBeDefined();
      expect(columnsOf(table ?? "")).toEqual([
        "uid",
        "created_date",
        "last_modified_date",
        "created_by",
        "last_modified_by",
        "__externalid",
      ]);
    },
  );

  test("track answers {id, tracked} on both paths, idempotently, and DELETE stops tracking", async () => {
    for (const path of [
      `/custom/standalone/track/${objectId}`,
      `/custom/standalone/schema/${objectId}/track`,
    ]) {
      const { status, body } = await admin("POST", path);
      expect(status).toBe(200);
      expect(body).toEqual({ result: { id: objectId, tracked: true } });
    }
    expect((await admin("DELETE", `/custom/standalone/track/${objectId}`)).body.result.tracked).toBe(false);
    expect((await admin("POST", `/custom/standalone/track/${objectId}`)).body.result.tracked).toBe(true);
    expect((await admin("POST", `/custom/standalone/track/${crypto.randomUUID()}`)).status).toBe(404);
  });

  test("a reference added to Contacts appears in the SDL at once, both ways", async () => {
    const { status, body } = await admin("POST", "/custom/standalone/fields", {
      schemaName: "Contacts",
      name: "CustomExternalObj",
      column: { type: "reference", referenceSchemaName: "CustomExternalObject" },
    });
    expect(status).toBe(200);
    expect(body.result).toMatchObject({
      name: "CustomExternalObj",
      schemaName: "Contacts",
      fieldType: "reference",
      referenceSchemaName: "CustomExternalObject",
      mapping: "__customexternalobj",
    });
    const text = await sdl();
    const contacts = text.slice(
      text.indexOf("type Contacts {"),
      text.indexOf("}", text.indexOf("type Contacts {")),
    );
    expect(contacts).toContain("CustomExternalObjId: ID");
    expect(contacts).toContain("CustomExternalObj: CustomExternalObject");
    const target = text.slice(text.indexOf("type CustomExternalObject {"));
    expect(target.slice(0, target.indexOf("\n}"))).toContain("Contacts(");
    const mutations = buildSchema(text).getType("SchemaMutations") as GraphQLObjectType;
    const upsert = mutations.getFields().upsertCustomExternalObject;
    expect(upsert?.args.map((arg) => `${arg.name}: ${arg.type}`)).toEqual([
      "input: NewCustomExternalObject!",
      "keyField: String!",
      "idAlias: String",
    ]);
    expect(text).toContain("schemaCustomExternalObject(");
  });

  test("a unique field added through /custom/standalone/fields is an upsert key", async () => {
    const { body } = await admin("POST", "/custom/standalone/fields", {
      schemaName: "CustomExternalObject",
      name: "Code",
      column: { type: "string", unique: true },
    });
    expect(body.result).toMatchObject({
      upsertKey: true,
      accessMode: "read_write",
      maxLength: 255,
      mapping: "__code",
    });
    const listed = (await admin("GET", "/custom/schemas")).body.result;
    expect(listed.map((o: { schema: { name: string } }) => o.schema.name)).toEqual(["CustomExternalObject"]);
    expect(listed[0].fields.map((f: { name: string }) => f.name)).toContain("Code");
  });
});

describe("column types", () => {
  test("all twelve types with their options make a queryable object", async () => {
    const column = (type: string) =>
      ({
        picklist: { type, items: ["Low", "High"], defaultValue: "Low" },
        multipicklist: { type, items: ["A", "B"] },
        reference: { type, referenceSchemaName: "Jobs" },
        decimal: { type, precision: 10, scale: 3 },
        int: { type, defaultValue: 7, required: true },
      })[type] ?? { type };
    const { status, body } = await admin("POST", "/custom/standalone/schemas", {
      name: "Everything",
      fields: CUSTOM_FIELD_TYPES.map((type) => ({ name: `F_${type}`, column: column(type) })),
    });
    expect(status).toBe(200);
    const byName = Object.fromEntries(body.result.fields.map((f: { name: string }) => [f.name, f]));
    expect(byName.F_decimal).toMatchObject({ precision: 10, scale: 3, fieldType: "decimal" });
    expect(byName.F_int).toMatchObject({ required: true });
    expect(byName.F_textarea.maxLength).toBe(32768);
    const text = await sdl();
    const type = text.slice(
      text.indexOf("type Everything {"),
      text.indexOf("\n}", text.indexOf("type Everything {")),
    );
    for (const line of [
      "F_string: String",
      "F_textarea: String",
      "F_url: String",
      "F_int: Int",
      "F_decimal: BigDecimal",
      "F_boolean: Boolean",
      "F_date: LocalDate",
      "F_datetime: Instant",
      "F_time: LocalTime",
      "F_picklist: String",
      "F_multipicklist: [String!]",
      "F_referenceId: ID",
      "F_reference: Jobs",
    ]) {
      expect(type).toContain(line);
    }
  });
});

describe("bad input", () => {
  const before = async () => ({
    objects: (await admin("GET", "/custom/schemas")).body.result.length,
    tables: tables().length,
  });

  // SQLite only: it reads the SQLite file's own catalogue (sqlite_master, table_info); PostgreSQL's tables are checked by the conformance suite's catalogue tests.
  test.skipIf(testEngine() !== "sqlite")(
    "every problem of a definition is listed, and nothing is created",
    async () => {
      const start = await before();
      const { status, body } = await admin("POST", "/custom/standalone/schemas", {
        name: "Bad",
        fields: [
          { name: "9lives", column: { type: "string" } },
          { name: "Kind", column: { type: "colour" } },
          { name: "Pick", column: { type: "picklist" } },
          { name: "Ref", column: { type: "reference", referenceSchemaName: "Nowhere" } },
          { name: "Num", column: { type: "decimal", precision: 4, scale: 6 } },
          { name: "Flag", column: { type: "boolean", unique: true } },
          { name: "When", column: { type: "date", defaultValue: "2024-02-30" } },
          { name: "pick", column: { type: "string" } },
        ],
      });
      expect(status).toBe(400);
      expect(body.errorType).toBe("validation_failed");
      const paths = body.details.map((d: { path: string }) => d.path);
      for (const path of [
        "fields[0].name",
        "fields[1].column.type",
        "fields[2].column.items",
        "fields[3].column.referenceSchemaName",
        "fields[4].column.scale",
        "fields[5].column.unique",
        "fields[6].column.defaultValue",
        "fields[7].name",
      ]) {
        expect(paths).toContain(path);
      }
      expect(await before()).toEqual(start);
    },
  );

  test("an object refused for its name is not offered as a reference target", async () => {
    const { status, body } = await admin("POST", "/custom/standalone/schemas", {
      name: "Bad Name",
      fields: [{ name: "Ref", column: { type: "reference", referenceSchemaName: "Nope" } }],
    });
    expect(status).toBe(400);
    const problem = body.details.find(
      (d: { path: string }) => d.path === "fields[0].column.referenceSchemaName",
    );
    expect(problem.message).toContain("no object named 'Nope'; known: ");
    expect(problem.message).not.toContain("Bad Name");
  });

  test("names: taken (any case) or standard → 409; reserved or malformed → 400", async () => {
    expect(
      (await admin("POST", "/custom/standalone/schemas", { name: "customexternalobject", fields: [] }))
        .status,
    ).toBe(409);
    expect((await admin("POST", "/custom/standalone/schemas", { name: "JOBS", fields: [] })).status).toBe(
      409,
    );
    for (const name of ["PageInfo", "Query", "JobsConnection", "Jobs_", "_x", "a-b", "Ünïcode", ""]) {
      const { status, body } = await admin("POST", "/custom/standalone/schemas", { name, fields: [] });
      expect({ name, status, errorType: body.errorType }).toEqual({
        name,
        status: name === "Jobs_" ? 200 : 400,
        errorType: name === "Jobs_" ? undefined : "validation_failed",
      });
    }
  });

  test("a field clashing with a member (including generated *Id names) → 409", async () => {
    for (const name of ["LastName", "lastname", "AccountId", "Account", "Jobs"]) {
      const { status } = await admin("POST", "/custom/standalone/fields", {
        schemaName: "Contacts",
        name,
        column: { type: "string" },
      });
      expect({ name, status }).toEqual({ name, status: 409 });
    }
    expect(
      (
        await admin("POST", "/custom/standalone/fields", {
          schemaName: "Nope",
          name: "X",
          column: { type: "string" },
        })
      ).status,
    ).toBe(400);
  });

  test("malformed and oversized bodies", async () => {
    expect(
      (await t.call("POST", "/custom/standalone/schemas", { token: acme.adminToken, rawBody: "{" })).body
        .errorType,
    ).toBe("bad_request");
    expect((await admin("POST", "/custom/standalone/schemas", [])).body.errorType).toBe("bad_request");
    const huge = {
      name: "Huge",
      fields: Array.from({ length: 501 }, (_, i) => ({ name: `F${i}`, column: { type: "string" } })),
    };
    expect((await admin("POST", "/custom/standalone/schemas", huge)).body.errorType).toBe(
      "validation_failed",
    );
  });

  test("non-administrators get 403 on every custom endpoint", async () => {
    const { token } = await t.addUser(acme.tenant.id, ["scheduler"]);
    for (const [method, path] of [
      ["POST", "/custom/standalone/schemas"],
      ["POST", "/custom/standalone/fields"],
      ["GET", "/custom/schemas"],
      ["POST", "/custom/standalone/track/x"],
      ["DELETE", "/custom/standalone/schema/x"],
      ["DELETE", "/custom/standalone/field/x"],
    ]) {
      expect((await t.call(method as string, path as string, { token, body: {} })).status).toBe(403);
    }
  });
});

describe("deleting and tenants", () => {
  test("tenant B sees none of A's objects and cannot touch them", async () => {
    const listed = (await admin("GET", "/custom/schemas", undefined, globex)).body.result;
    expect(listed).toEqual([]);
    expect(await sdl(globex)).not.toContain("CustomExternalObject");
    const aId = (await admin("GET", "/custom/schemas")).body.result[0].schema.id;
    expect((await admin("DELETE", `/custom/standalone/schema/${aId}`, undefined, globex)).status).toBe(404);
    expect((await admin("POST", `/custom/standalone/track/${aId}`, undefined, globex)).status).toBe(404);
    expect(
      (
        await admin(
          "POST",
          "/custom/standalone/schemas",
          { name: "CustomExternalObject", fields: [] },
          globex,
        )
      ).status,
    ).toBe(200);
  });

  // SQLite only: it reads the SQLite file's own catalogue (sqlite_master, table_info); PostgreSQL's tables are checked by the conformance suite's catalogue tests.
  test.skipIf(testEngine() !== "sqlite")(
    "a referenced object cannot be deleted; deleting the field, then the object, removes their storage",
    async () => {
      const objects = (await admin("GET", "/custom/schemas")).body.result;
      const external = objects.find(
        (o: { schema: { name: string } }) => o.schema.name === "CustomExternalObject",
      );
      const blocked = await admin("DELETE", `/custom/standalone/schema/${external.schema.id}`);
      expect(blocked.status).toBe(409);
      expect(blocked.body.message).toContain("Contacts.CustomExternalObj");

      const contactsTable = tables().find(
        (name) => /^t\d+_contacts$/.test(name) && columnsOf(name).includes("__customexternalobj"),
      );
      expect(contactsTable).toBeDefined();
      const field = (await sdlFieldId("Contacts", "CustomExternalObj")) as string;
      expect((await admin("DELETE", `/custom/standalone/field/${field}`)).status).toBe(200);
      expect(columnsOf(contactsTable ?? "")).not.toContain("__customexternalobj");
      expect(await sdl()).not.toContain("CustomExternalObjId");

      const objectTable = tables().find(
        (name) =>
          name.endsWith("___customexternalobject") &&
          name.startsWith(`t${contactsTable?.split("_")[0]?.slice(1)}_`),
      );
      expect(objectTable).toBeDefined();
      expect((await admin("DELETE", `/custom/standalone/schema/${external.schema.id}`)).status).toBe(200);
      expect(tables()).not.toContain(objectTable);
      expect(await sdl()).not.toContain("CustomExternalObject");
      expect((await admin("DELETE", `/custom/standalone/schema/${external.schema.id}`)).status).toBe(404);
      const standard = await admin("DELETE", `/custom/standalone/field/${stableId("Contacts.LastName")}`);
      expect(standard.status).toBe(400);
      expect(await sdl()).toContain("LastName");
    },
  );
});

describe("a mutation kept from before a change of its input type", () => {
  test("a field added since is accepted at once through variables, every time (its variables fail on the kept catalogue before any write)", async () => {
    const gql = (variables: unknown) =>
      admin("POST", "/graphql/graphql", {
        query: "mutation ($in: NewRegions!) { schema { insertRegions(input: $in) } }",
        variables,
      });
    for (const name of ["Kept A", "Kept B"])
      expect((await gql({ in: { Name: name, Timezone: "UTC" } })).body).not.toHaveProperty("errors");
    const added = await admin("POST", "/custom/standalone/fields", {
      schemaName: "Regions",
      name: "KeptCode",
      column: { type: "string" },
    });
    expect(added.status).toBe(200);
    for (const name of ["Kept C", "Kept D"]) {
      const written = await gql({ in: { Name: name, Timezone: "UTC", KeptCode: "k" } });
      expect(written.body).not.toHaveProperty("errors");
    }
  });
});
