import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runAdminCommand } from "../../api/admin/admin-commands.ts";
import { createTestApp, type TestApp } from "../support/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const run = (...argv: string[]) =>
  runAdminCommand(argv, { store: t.store, auth: t.auth, catalogues: t.catalogues });

describe("admin tool", () => {
  test("create-tenant prints an administrator token that the API accepts", async () => {
    const lines = await run("create-tenant", "initech", "--admin", "peter");
    expect(lines[0]).toMatch(/^tenant initech \([0-9a-f-]{36}\) created$/);
    const whoami = await t.call("GET", "/auth/whoami", { token: lines.at(-1) });
    expect(whoami.status).toBe(200);
    expect(whoami.body.result).toMatchObject({ username: "peter", roles: ["administrator", "scheduler"] });
  });

  test("create-tenant refuses an existing name (any case) and bad names", async () => {
    await expect(run("create-tenant", "INITECH")).rejects.toMatchObject({ code: "conflict" });
    await expect(run("create-tenant", "9lives")).rejects.toMatchObject({ code: "validation_failed" });
  });

  test("add-user and mint-token give a user a token with their roles only", async () => {
    await run("add-user", "--tenant", "initech", "milton", "--roles", "resource");
    const [token] = await run("mint-token", "--tenant", "initech", "--user", "milton");
    const whoami = await t.call("GET", "/auth/whoami", { token });
    expect(whoami.body.result).toMatchObject({ username: "milton", roles: ["resource"] });
    expect((await t.call("GET", "/auth/tokens", { token })).status).toBe(403);
    await expect(
      run("mint-token", "--tenant", "initech", "--user", "milton", "--roles", "administrator"),
    ).rejects.toMatchObject({
      code: "validation_failed",
    });
  });

  test("mint-token with --expires makes a time-limited token", async () => {
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    const [token] = await run("mint-token", "--tenant", "initech", "--user", "peter", "--expires", expires);
    expect((await t.call("GET", "/auth/whoami", { token })).body.result.expiresAt).toBe(expires);
  });

  test("list-tenants prints each tenant once", async () => {
    const lines = await run("list-tenants");
    expect(lines.filter((line) => line.split("\t")[1] === "initech").length).toBe(1);
  });

  test("unknown commands and missing arguments are errors with the usage", async () => {
    await expect(run("frobnicate")).rejects.toThrow(/usage/);
    await expect(run("mint-token", "--user", "peter")).rejects.toThrow(/--tenant/);
    await expect(run("mint-token", "--tenant", "nope", "--user", "peter")).rejects.toMatchObject({
      code: "not_found",
    });
  });
});
