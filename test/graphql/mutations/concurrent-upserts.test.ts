import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type ProvisionedTenant, TEST_JWT_SECRET, type TestApp } from "../../support/app.ts";
import { changeLog } from "../../support/graphql.ts";

let t: TestApp;
let acme: ProvisionedTenant;
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.provision("acme");
  const created = await t.call("POST", "/custom/standalone/schemas", {
    token: acme.adminToken,
    body: {
      name: "CustomExternalObject",
      fields: [
        { name: "ExternalId", column: { type: "string", unique: true } },
        { name: "Note", column: { type: "string" } },
      ],
    },
  });
  expect(created.status).toBe(200);
});
afterAll(() => t.close());

test("parallel upserts of overlapping keys from several processes make exactly one record per key, each change logged once", async () => {
  const keys = Array.from({ length: 12 }, (_, i) => `key-${i}`);
  const shuffled = () => [...keys].sort(() => Math.random() - 0.5).join(",");
  const env = {
    ...process.env,
    ...t.storeEnv,
    REDIS_URL: t.redis.url,
    JWT_SECRET: TEST_JWT_SECRET,
    LOG_LEVEL: "silent",
  };
  const workers = Array.from({ length: 4 }, () =>
    Bun.spawn([process.execPath, "test/support/upsert-worker.ts", acme.adminToken, shuffled(), "15"], {
      env,
      stdout: "pipe",
      stderr: "inherit",
    }),
  );
  const succeeded = await Promise.all(
    workers.map(async (worker) => Number((await new Response(worker.stdout).text()).trim())),
  );
  expect(await Promise.all(workers.map((worker) => worker.exited))).toEqual([0, 0, 0, 0]);
  expect(succeeded).toEqual([15, 15, 15, 15]);

  const log = (await changeLog(t, acme.tenant.id)).filter(
    (entry) => entry.objectName === "CustomExternalObject",
  );
  const inserts = log.filter((entry) => entry.operation === "INSERT");
  expect(inserts.map((entry) => entry.after?.ExternalId).sort()).toEqual([...keys].sort());
  const uids = new Set(log.map((entry) => entry.uid));
  expect(uids.size).toBe(keys.length);
  // Every logged UPDATE really changed the note, and no mutation logged one record twice.
  for (const entry of log.filter((e) => e.operation === "UPDATE"))
    expect(entry.before?.Note).not.toBe(entry.after?.Note);
  const perMutation = new Set(log.map((entry) => `${entry.mutationId}/${entry.uid}`));
  expect(perMutation.size).toBe(log.length);
}, 60_000);
