import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runWebhookTool, serviceClient } from "../../api/admin/webhook-tool.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";

let t: TestApp;
let acme: ProvisionedTenant;
let server: { stop(close?: boolean): Promise<unknown>; url: string };
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.provision("acme");
  const listening = t.app.listen({ port: 0, hostname: "127.0.0.1" });
  server = {
    url: `http://127.0.0.1:${listening.server?.port}`,
    stop: async (close) => listening.stop(close),
  };
});
afterAll(async () => {
  await server.stop(true);
  await t.close();
});

test("deploy creates then replaces by name; set-var, list and delete work over real HTTP", async () => {
  const run = (...argv: string[]) => runWebhookTool(argv, serviceClient(server.url, acme.adminToken));
  expect(await run("set-var", "HOST", "hooks.example.com")).toEqual(["set HOST (plain-text)"]);
  expect(await run("set-var", "KEY", "s3cret", "--secret")).toEqual(["set KEY (secret)"]);
  const file = join(t.dataDir, "hook.json");
  const definition = {
    name: "jobs",
    url: "https://{{ HOST }}/in",
    type: "graphql",
    query: "subscription { schemaJobs { operation } }",
    headers: { "X-Key": "{{ KEY }}" },
  };
  writeFileSync(file, JSON.stringify(definition));
  const created = await run("deploy", file);
  expect(created[0]).toMatch(/^created jobs \(/);
  expect(created[1]).toMatch(/whsec_/);
  writeFileSync(
    file,
    JSON.stringify({ ...definition, query: "subscription { schemaRegions { operation } }" }),
  );
  expect((await run("deploy", file))[0]).toMatch(/^replaced jobs \(/);
  const listed = await run("list");
  expect(listed.length).toBe(1);
  expect(listed[0]).toContain("https://{{ HOST }}/in");
  writeFileSync(file, JSON.stringify({ ...definition, name: "broken", url: "https://{{ NOPE }}/" }));
  await expect(run("deploy", file)).rejects.toThrow(/NOPE/);
  expect((await run("delete", "jobs"))[0]).toMatch(/^deleted jobs/);
  expect(await run("list")).toEqual([]);
  await expect(run("frobnicate")).rejects.toThrow(/usage/);
});
