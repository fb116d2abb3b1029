/**
 * `copy-store` end to end, across engines: a store built through the app on a real SQLite file
 * (tenants, a custom object with a field of every column type, a custom field on a standard
 * object, records, generated names, tokens, webhooks of every kind with a rotated secret, secret
 * config variables, deliveries with their attempts, and a change its feed had not handed on yet),
 * copied into a real PostgreSQL database and from there into another SQLite file. On each copy the
 * same GraphQL and REST requests through the real app answer exactly as on the source; on the
 * PostgreSQL copy a token of the source is accepted, a mutation is delivered to a real receiver
 * signed with the copied secret, generated names go on, nothing already delivered is delivered
 * again, and the change the source's feed had not handed on is delivered.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { runCopyStoreCommand } from "../../api/admin/copy-store-command.ts";
import { createLogger } from "../../common/log.ts";
import { loadDispatcherConfig } from "../../dispatcher/config.ts";
import { type OpenDispatcher, openDispatcher } from "../../dispatcher/open-dispatcher.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { eventually } from "../support/eventually.ts";
import { createTestDatabase, type TestDatabase } from "../support/private-postgres.ts";
import { type ReceivedRequest, type Receiver, startReceiver } from "../support/receiver.ts";
import { standardWebhooksProblem } from "../support/standard-webhooks.ts";
import { makeTempDir, removeTempDir } from "../support/temp-dirs.ts";
import { copyStoreWorld, type World } from "./copy-store-world.ts";

/** Given to every app and dispatcher: the copy keeps secrets sealed, so both sides need the one key. */
const SECRETS_KEY = "copy-store-secrets-key-copy-store-secrets-key";
const sourceDir = makeTempDir("tds-copy-source-");
const backDir = makeTempDir("tds-copy-back-");
let postgres: TestDatabase;
let receiver: Receiver;
let world: World;
/** Every answer of the source, as JSON text (key order included), before any copy. */
let sourceAnswers: string;
/** How many records the source holds, of every object of every tenant. */
let sourceRecords = 0;

async function recordsIn(t: TestApp): Promise<number> {
  let count = 0;
  for (const tenant of await t.store.listTenants())
    for (const object of (await t.catalogues.get(tenant.id)).objects)
      count += await t.store.countRecords(tenant.id, object, null, Date.now());
  return count;
}

/** An app on the store `env` locates, its feed not started: reading it changes nothing. */
const appOn = (env: Record<string, string>) =>
  createTestApp({ ...env, SECRETS_KEY, FEED_POLL_MS: "20", LOG_LEVEL: "silent" });

async function dispatcherFor(t: TestApp): Promise<OpenDispatcher> {
  const config = loadDispatcherConfig({
    ...t.storeEnv,
    SECRETS_KEY,
    REDIS_URL: t.redis.url,
    REDIS_PREFIX: t.redis.prefix,
    LOG_LEVEL: "silent",
    DELIVERY_ALLOW_HTTP: "true",
    DELIVERY_ALLOW_PRIVATE_NETWORKS: "127.0.0.0/8",
    DISPATCHER_PORT: "0",
  });
  const dispatcher = await openDispatcher(config, { redis: t.redis.redis, log: createLogger("silent") });
  await dispatcher.ready();
  return dispatcher;
}

const requestsTo = (path: string): ReceivedRequest[] => receiver.requests.filter((r) => r.path === path);

beforeAll(async () => {
  receiver = startReceiver();
  postgres = await createTestDatabase("copy-store");
  const source = await appOn({ DATA_DIR: sourceDir });
  const dispatcher = await dispatcherFor(source);
  try {
    world = await copyStoreWorld(source, receiver.url);
    // Delivered on the source (the world's first Job and Regions, then this Job): in its delivery
    // log, with their attempts; never to be delivered again.
    source.feed.start();
    await world.insertJob(source, "delivered on the source");
    await eventually(() => expect(requestsTo("/jobs")).toHaveLength(2), { timeoutMs: 10_000 });
    await eventually(() => expect(requestsTo("/regions")).toHaveLength(1), { timeoutMs: 10_000 });
    await eventually(async () => {
      const listed = await source.call("GET", `/webhooks/${world.jobsHook.id}/deliveries`, {
        token: world.acme.adminToken,
      });
      expect(listed.body.result.map((d: { status: string }) => d.status)).toEqual(["succeeded", "succeeded"]);
    });
    await source.feed.stop();
    // Committed while the feed is stopped: its webhooks have not heard of it when the copy is made.
    await world.insertJob(source, "not yet handed on");
    const answers = await world.answers(source);
    // Answers worth comparing: each request answered in full (but the two meant to be refused).
    const refused: Record<string, number> = { "revoked whoami": 401, "globex API_KEY": 404 };
    for (const [what, status, body] of answers) {
      expect([what, status]).toEqual([what, refused[what] ?? 200]);
      expect([what, (body as { errors?: unknown }).errors]).toEqual([what, undefined]);
    }
    sourceAnswers = JSON.stringify(answers);
    sourceRecords = await recordsIn(source);
  } finally {
    await dispatcher.close(1000);
    await source.close();
  }
}, 60_000);

afterAll(async () => {
  await receiver.stop();
  await postgres.drop();
  removeTempDir(sourceDir);
  removeTempDir(backDir);
});

describe("copy-store", () => {
  test("SQLite → PostgreSQL: counts per kind, then every answer the same through the app", async () => {
    const lines = await runCopyStoreCommand(["--from", sourceDir, "--to", postgres.url, "--page-size", "2"]);
    expect(lines[0]).toBe(
      `copied sqlite ${join(sourceDir, "store.sqlite")} → postgres ${postgres.url.replace(/:[^:@/]+@/, ":***@")}`,
    );
    const count = (kind: string) => Number(lines.find((line) => line.startsWith(kind))?.slice(20, 29));
    expect(count("tenants")).toBe(2);
    expect(count("custom objects")).toBe(1);
    expect(count("webhooks")).toBe(4);
    expect(count("config variables")).toBe(2);
    expect(count("deliveries")).toBe(3);
    expect(count("delivery attempts")).toBe(3);
    expect(count("change-log entries")).toBe(1);
    expect(count("records")).toBe(sourceRecords);
    const target = await appOn({ DATABASE_URL: postgres.url, DATA_DIR: makeTempDir("tds-copy-pg-") });
    try {
      expect(JSON.stringify(await world.answers(target))).toBe(sourceAnswers);
    } finally {
      await target.close();
    }
  }, 30_000);

  test("PostgreSQL → SQLite: the copy of the copy answers the same", async () => {
    const lines = await runCopyStoreCommand(["--from", postgres.url, "--to", backDir]);
    expect(lines[0]).toContain(`→ sqlite ${join(backDir, "store.sqlite")}`);
    const back = await appOn({ DATA_DIR: backDir });
    try {
      expect(JSON.stringify(await world.answers(back))).toBe(sourceAnswers);
    } finally {
      await back.close();
    }
  }, 30_000);

  test("on the PostgreSQL copy: the source's token works, the copied secret signs, names go on, only the change not handed on is delivered", async () => {
    const target = await appOn({ DATABASE_URL: postgres.url, DATA_DIR: makeTempDir("tds-copy-pg-") });
    const dispatcher = await dispatcherFor(target);
    try {
      const whoami = await target.call("GET", "/auth/whoami", { token: world.acme.adminToken });
      expect(whoami.status).toBe(200);
      expect(whoami.body.result.tenantId).toBe(world.acme.tenant.id);
      expect((await target.call("GET", "/auth/whoami", { token: world.revokedToken })).status).toBe(401);

      target.feed.start();
      const name = await world.insertJob(target, "made on the target");
      expect(name).toBe("JOB-0004");
      await eventually(() => expect(requestsTo("/jobs")).toHaveLength(4), { timeoutMs: 10_000 });
      await Bun.sleep(200);
      const arrived = requestsTo("/jobs").slice(2);
      const described = arrived.map((r) => JSON.parse(r.body)[0].data.schemaJobs.data.Description);
      // The change the source's feed had not handed on, then the target's own; the first one not again.
      expect(described.toSorted()).toEqual(["made on the target", "not yet handed on"]);
      expect(requestsTo("/jobs")).toHaveLength(4);
      expect(requestsTo("/regions")).toHaveLength(1);
      for (const request of arrived) {
        expect(await standardWebhooksProblem(world.jobsHook.secret, request)).toBeNull();
        // The header's secret config variable, opened with the one key: the ciphertext came over whole.
        expect(request.headers["x-api-key"]).toBe(world.apiKey);
      }
    } finally {
      await dispatcher.close(1000);
      await target.close();
    }
  }, 30_000);
});
