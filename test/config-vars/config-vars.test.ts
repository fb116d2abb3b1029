import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createSecretBox } from "../../common/secret-box.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { SQL_UNDER_PORT, storeSql } from "../support/store-sql.ts";

let t: TestApp;
let acme: ProvisionedTenant;
let globex: ProvisionedTenant;
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.provision("acme");
  globex = await t.provision("globex");
});
afterAll(() => t.close());

const admin = (method: string, path: string, body?: unknown, tenant = acme) =>
  t.call(method, path, { token: tenant.adminToken, body });

describe("config variables", () => {
  test("plain-text: create, read, replace, list, delete", async () => {
    const created = await admin("POST", "/configuration/extension", {
      key: "HOST",
      value: "hooks.example.com",
      configType: "plain-text",
    });
    expect(created.status).toBe(200);
    expect(created.body.result).toMatchObject({
      key: "HOST",
      value: "hooks.example.com",
      configType: "plain-text",
      description: null,
    });
    const replaced = await admin("POST", "/configuration/extension", {
      key: "HOST",
      value: "other.example.com",
      description: "receiver",
    });
    expect(replaced.body.result).toMatchObject({
      value: "other.example.com",
      description: "receiver",
      createdAt: created.body.result.createdAt,
    });
    expect((await admin("GET", "/configuration/extension/HOST")).body.result.value).toBe("other.example.com");
    expect((await admin("DELETE", "/configuration/extension/HOST")).status).toBe(200);
    expect((await admin("GET", "/configuration/extension/HOST")).status).toBe(404);
    expect((await admin("DELETE", "/configuration/extension/HOST")).status).toBe(404);
  });

  test.skipIf(!SQL_UNDER_PORT)("secrets are never answered back and are encrypted at rest", async () => {
    const created = await admin("POST", "/configuration/extension", {
      key: "API_KEY",
      value: "s3cr3t-value",
      configType: "secret",
    });
    expect(created.body.result.value).toBeNull();
    expect((await admin("GET", "/configuration/extension/API_KEY")).body.result.value).toBeNull();
    const listed = (await admin("GET", "/configuration/extension")).body.result;
    expect(listed.find((v: { key: string }) => v.key === "API_KEY").value).toBeNull();

    const [raw] = await storeSql<{ value: string }>(
      t.storeEnv,
      "SELECT value FROM config_variables WHERE key = $1",
      ["API_KEY"],
    );
    expect(raw?.value).not.toContain("s3cr3t");
    expect(raw?.value).toStartWith("v1.");
  });

  test("bad keys, oversized values and unknown types are listed problems", async () => {
    const { status, body } = await admin("POST", "/configuration/extension", {
      key: "9bad key",
      value: "x".repeat(8193),
      configType: "vault",
    });
    expect(status).toBe(400);
    expect(body.details.map((d: { path: string }) => d.path).sort()).toEqual(["configType", "key", "value"]);
  });

  test("tenants never see each other's variables; non-admins get 403", async () => {
    await admin("POST", "/configuration/extension", { key: "ONLY_ACME", value: "a" });
    expect((await admin("GET", "/configuration/extension/ONLY_ACME", undefined, globex)).status).toBe(404);
    expect((await admin("GET", "/configuration/extension", undefined, globex)).body.result).toEqual([]);
    expect((await admin("DELETE", "/configuration/extension/ONLY_ACME", undefined, globex)).status).toBe(404);
    const { token } = await t.addUser(acme.tenant.id, ["scheduler"]);
    expect((await t.call("GET", "/configuration/extension", { token })).status).toBe(403);
  });
});

describe("secret box", () => {
  const box = createSecretBox("k".repeat(32));
  test("round-trips, and refuses another context, another key or a tampered ciphertext", () => {
    const sealed = box.seal("hello", "ctx-a");
    expect(box.open(sealed, "ctx-a")).toBe("hello");
    expect(() => box.open(sealed, "ctx-b")).toThrow();
    expect(() => createSecretBox("z".repeat(32)).open(sealed, "ctx-a")).toThrow();
    const parts = sealed.split(".");
    parts[2] = Buffer.from("tampered").toString("base64url");
    expect(() => box.open(parts.join("."), "ctx-a")).toThrow();
    expect(box.seal("hello", "ctx-a")).not.toBe(sealed);
  });
});
