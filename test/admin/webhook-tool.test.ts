import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Queue } from "bullmq";
import { runWebhookTool, serviceClient } from "../../api/admin/webhook-tool.ts";
import { WEBHOOK_EVENT_QUEUE } from "../../common/redis-keys.ts";
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

test("deploy, list and delete webhooks of every kind from files; a redeploy may change the kind, and the schedule follows", async () => {
  const run = (...argv: string[]) => runWebhookTool(argv, serviceClient(server.url, acme.adminToken));
  const deploy = async (name: string, definition: Record<string, unknown>) => {
    const file = join(t.dataDir, `${name}.json`);
    writeFileSync(file, JSON.stringify({ name, url: "https://hooks.example.com/in", ...definition }));
    return run("deploy", file);
  };
  const queue = new Queue(WEBHOOK_EVENT_QUEUE, {
    connection: t.redis.redis,
    prefix: t.redis.keys.bullPrefix,
  });
  const scheduler = (id: string) => queue.getJobScheduler(id);
  expect(
    (await deploy("changes", { type: "graphql", query: "subscription { schemaJobs { operation } }" }))[0],
  ).toMatch(/^created/);
  expect(
    (
      await deploy("later", {
        type: "graphql_deferred",
        field: "Start",
        offset: { field: "Duration", default: 0 },
        query: "subscription { jobs { UID Name } }",
        filter: "JobStatus == 'Queued'",
      })
    )[0],
  ).toMatch(/^created/);
  expect((await deploy("nightly", { type: "scheduled", cron: "0 2 * * *" }))[0]).toMatch(/^created/);
  const kinds = (await run("list")).map((line) =>
    line.split("\t").slice(1, 2).concat(line.split("\t").slice(4)).join(" "),
  );
  expect(kinds.sort()).toEqual([
    "changes graphql",
    "later graphql_deferred Start+Duration",
    "nightly scheduled 0 2 * * *",
  ]);
  const idOf = async (name: string) =>
    ((await run("list")).find((l) => l.includes(`\t${name}\t`)) ?? "").split("\t")[0] as string;
  const nightly = await idOf("nightly");
  expect((await scheduler(nightly))?.pattern).toBe("0 2 * * *");

  // A redeploy that changes the cron moves the schedule; one that changes the kind removes it.
  await deploy("nightly", { type: "scheduled", cron: "30 3 * * 1-5" });
  expect((await scheduler(nightly))?.pattern).toBe("30 3 * * 1-5");
  await deploy("nightly", { type: "graphql", query: "subscription { schemaRegions { operation } }" });
  expect(await scheduler(nightly)).toBeUndefined();
  await deploy("nightly", { type: "scheduled", cron: "0 2 * * *" });
  expect((await scheduler(nightly))?.pattern).toBe("0 2 * * *");
  // A bad cron is refused with its position, through the tool too.
  await expect(deploy("broken", { type: "scheduled", cron: "0 2 * *" })).rejects.toThrow(
    /cron: at position 7/,
  );

  for (const name of ["changes", "later", "nightly"])
    expect((await run("delete", name))[0]).toMatch(/^deleted/);
  expect(await scheduler(nightly)).toBeUndefined();
  expect(await run("list")).toEqual([]);
  await queue.close();
});
