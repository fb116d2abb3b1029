import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runAdminCommand } from "../../api/admin/admin-commands.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { changeLog } from "../support/graphql.ts";
import { queuedJobs } from "../support/queue.ts";

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

describe("users written by the admin tool are records like any other, in the change log", () => {
  test("create-tenant logs its administrator's Users record", async () => {
    const lines = await run("create-tenant", "umbrella", "--admin", "alice");
    const tenantId = /\(([0-9a-f-]{36})\)/.exec(lines[0] ?? "")?.[1] as string;
    const admin = await t.store.findUserByUsername(tenantId, "alice");
    const entries = await changeLog(t, tenantId);
    expect(entries.map((e) => `${e.objectName}:${e.operation}:${e.uid}`)).toEqual([
      `Users:INSERT:${admin?.id}`,
    ]);
    expect(entries[0]?.after).toMatchObject({
      UID: admin?.id,
      LastName: "alice",
      Email: "alice@umbrella.invalid",
      UserTypes: ["Administrator", "Scheduler"],
      CreatedBy: admin?.id,
    });
  });

  test("add-user reaches a webhook subscribed to schemaUsers", async () => {
    // Before, the Users record was written beside the change log: no entry, no delivery.
    const [, , token] = await run("create-tenant", "hooli", "--admin", "gavin");
    await t.feed.processBatch();
    const created = await t.call("POST", "/webhooks", {
      token,
      body: {
        name: "new-users",
        url: "https://receiver.example.com/users",
        type: "graphql",
        query: "subscription { schemaUsers { operation data { UID Email LastName UserTypes } } }",
      },
    });
    expect(created.status).toBe(201);
    const webhookId = created.body.result.id as string;

    const [line] = await run("add-user", "--tenant", "hooli", "richard", "--roles", "scheduler,resource");
    const userId = /\(([0-9a-f-]{36})\)/.exec(line ?? "")?.[1];
    expect(await t.feed.processBatch()).toBeGreaterThanOrEqual(1);
    const jobs = (await queuedJobs(t.redis)).filter((job) => job.data.webhookId === webhookId);
    expect(jobs.map((job) => job.data.body)).toEqual([
      [
        {
          data: {
            schemaUsers: {
              operation: "INSERT",
              data: {
                UID: userId,
                Email: "richard@hooli.invalid",
                LastName: "richard",
                UserTypes: ["Scheduler", "Resource"],
              },
            },
          },
        },
      ],
    ]);
  });

  test("a user whose record the Users object refuses is not added at all", async () => {
    const tenant = await t.store.findTenantByName("hooli");
    const logBefore = (await changeLog(t, tenant?.id as string)).length;
    const email = `${"x".repeat(250)}@hooli.invalid`;
    await expect(
      run("add-user", "--tenant", "hooli", "dinesh", "--roles", "resource", "--email", email),
    ).rejects.toMatchObject({ code: "validation_failed" });
    expect(await t.store.findUserByUsername(tenant?.id as string, "dinesh")).toBeNull();
    expect((await changeLog(t, tenant?.id as string)).length).toBe(logBefore);
  });
});
