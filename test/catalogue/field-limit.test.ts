import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadApiConfig, MAX_FIELDS_PER_OBJECT_CEILING } from "../../api/config.ts";
import { STANDARD_OBJECTS } from "../../api/model/standard-objects.ts";
import { ConfigError } from "../../common/errors.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";

// A small limit keeps the test fast; the default's distance from engine limits is checked below.
const LIMIT = 4;
/** PostgreSQL's column limit, the lowest of the engines' (SQLite's default is 2000). */
const ENGINE_COLUMN_LIMIT = 1600;

let t: TestApp;
let acme: ProvisionedTenant;
beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: "error", CUSTOM_MAX_FIELDS_PER_OBJECT: String(LIMIT) });
  acme = await t.provision("acme");
});
afterAll(() => t.close());

const admin = (method: string, path: string, body?: unknown) =>
  t.call(method, path, { token: acme.adminToken, body });
const fields = (count: number, prefix = "F") =>
  Array.from({ length: count }, (_, i) => ({ name: `${prefix}${i}`, column: { type: "int" } }));
/** What a refused definition must leave unchanged: the objects, their fields, the SDL. */
const footprint = async () => {
  const catalogue = await t.catalogues.get(acme.tenant.id);
  const sdl = (await t.call("GET", "/graphql/schema", { token: acme.adminToken })).body as string;
  return { fields: catalogue.objects.map((o) => `${o.name}:${o.fields.length}`), sdl };
};

describe("fields per object", () => {
  test("an object defined with limit + 1 fields is refused with 400 validation_failed; nothing is created", async () => {
    const before = await footprint();
    const { status, body } = await admin("POST", "/custom/standalone/schemas", {
      name: "TooWide",
      fields: fields(LIMIT + 1),
    });
    expect(status).toBe(400);
    expect(body.errorType).toBe("validation_failed");
    expect(body.details).toEqual([
      { path: "fields", message: `${LIMIT + 1} fields: an object may have at most ${LIMIT} custom fields` },
    ]);
    expect(await footprint()).toEqual(before);
  });

  test("an object at the limit is created; one field more is refused the same way, and nothing is added", async () => {
    const created = await admin("POST", "/custom/standalone/schemas", {
      name: "Wide",
      fields: fields(LIMIT),
    });
    expect(created.status).toBe(200);
    const before = await footprint();
    const { status, body } = await admin("POST", "/custom/standalone/fields", {
      schemaName: "Wide",
      name: "OneTooMany",
      column: { type: "string" },
    });
    expect(status).toBe(400);
    expect(body.errorType).toBe("validation_failed");
    expect(body.details).toEqual([
      {
        path: "schemaName",
        message: `Wide has ${LIMIT} custom fields already: an object may have at most ${LIMIT} custom fields`,
      },
    ]);
    expect(await footprint()).toEqual(before);
    expect(before.sdl).not.toContain("OneTooMany");
  });

  test("a standard object takes the limit in custom fields, its own fields not counted", async () => {
    for (const field of fields(LIMIT, "Extra")) {
      const added = await admin("POST", "/custom/standalone/fields", { schemaName: "Contacts", ...field });
      expect(added.status).toBe(200);
    }
    const before = await footprint();
    const refused = await admin("POST", "/custom/standalone/fields", {
      schemaName: "Contacts",
      name: "OneTooMany",
      column: { type: "int" },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.details[0].path).toBe("schemaName");
    expect(await footprint()).toEqual(before);
  });

  test("deleting a custom field makes room for another", async () => {
    const catalogue = await t.catalogues.get(acme.tenant.id);
    const wide = catalogue.objects.find((o) => o.name === "Wide");
    const last = wide?.fields.find((f) => f.name === `F${LIMIT - 1}`);
    expect((await admin("DELETE", `/custom/standalone/field/${last?.id}`)).status).toBe(200);
    const added = await admin("POST", "/custom/standalone/fields", {
      schemaName: "Wide",
      name: "Replacement",
      column: { type: "int" },
    });
    expect(added.status).toBe(200);
  });
});

describe("the setting CUSTOM_MAX_FIELDS_PER_OBJECT", () => {
  const env = { REDIS_URL: "redis://127.0.0.1:6379" };
  const widestStandard = Math.max(...STANDARD_OBJECTS.map((object) => object.fields.length));

  test("its default, with the widest standard object's fields, stays far below every engine's column limit", () => {
    const { CUSTOM_MAX_FIELDS_PER_OBJECT } = loadApiConfig(env);
    expect(CUSTOM_MAX_FIELDS_PER_OBJECT).toBe(500);
    expect(CUSTOM_MAX_FIELDS_PER_OBJECT + widestStandard).toBeLessThan(ENGINE_COLUMN_LIMIT / 2);
  });

  test("it cannot be set past its ceiling, which also stays below the engines' limit", () => {
    expect(MAX_FIELDS_PER_OBJECT_CEILING + widestStandard).toBeLessThan(ENGINE_COLUMN_LIMIT);
    expect(loadApiConfig({ ...env, CUSTOM_MAX_FIELDS_PER_OBJECT: "1000" }).CUSTOM_MAX_FIELDS_PER_OBJECT).toBe(
      1000,
    );
    expect(() => loadApiConfig({ ...env, CUSTOM_MAX_FIELDS_PER_OBJECT: "1996" })).toThrow(ConfigError);
    expect(() => loadApiConfig({ ...env, CUSTOM_MAX_FIELDS_PER_OBJECT: "0" })).toThrow(ConfigError);
  });
});
