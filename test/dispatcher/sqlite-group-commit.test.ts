// @test-engines sqlite: it tests SQLite's group commit
/** The SQLite delivery store's group commit: writes of one event-loop turn share a transaction, each atomic on its own. */
import { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DeliveryStore } from "../../common/delivery-log/delivery-store.ts";
import { openDeliveryStore } from "../../common/delivery-log/open-delivery-store.ts";
import { migrate } from "../../common/store/sqlite/migrations.ts";

const attempt = { startedAt: 10, durationMs: 5, statusCode: 200, responseBody: "ok", error: null };
const ids = Array.from({ length: 10 }, (_, i) => `d${i + 1}`);

describe("SQLite delivery store group commit", () => {
  let dir: string;
  let api: Database;
  let store: DeliveryStore;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "tds-group-commit-"));
    api = new Database(join(dir, "store.sqlite"), { create: true, strict: true });
    api.run("PRAGMA journal_mode = WAL");
    migrate(api);
    api.run(`INSERT INTO webhooks (tenant_id, id, name, url, type, query, headers, secret, enabled, version, created_at, updated_at)
             VALUES ('t', 'w', 'w', 'http://r/', 'graphql', 'subscription { x }', '{}', 'sealed', 1, 1, 0, 0)`);
    for (const id of ids) {
      api.run(
        `INSERT INTO deliveries (tenant_id, id, webhook_id, event_id, status, body, attempts, committed_at, created_at, updated_at)
         VALUES ('t', ?, 'w', ?, 'pending', '[]', 0, 0, 0, 0)`,
        [id, `m-${id}`],
      );
    }
    store = await openDeliveryStore({ engine: "sqlite", path: join(dir, "store.sqlite") });
  });
  afterEach(async () => {
    await store.close();
    api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const logged = () =>
    api
      .query<{ id: string; status: string; attempts: number; rows: number }, []>(
        `SELECT d.id, d.status, d.attempts, (SELECT count(*) FROM delivery_attempts a WHERE a.delivery_id = d.id) AS rows
         FROM deliveries d ORDER BY CAST(substr(d.id, 2) AS INTEGER)`,
      )
      .all();

  test("concurrent writes all land, each delivery's in order", async () => {
    const results = await Promise.all(
      ids.flatMap((id) => [
        store.startAttempt({
          tenantId: "t",
          deliveryId: id,
          webhookId: "w",
          webhookVersion: 1,
          startedAt: 1,
          request: { url: "http://r/", headers: {} },
        }),
        store.finishAttempt("t", id, 1, attempt, "pending").then(() => "finished"),
        store.recordAttempt("t", id, attempt, "succeeded"),
      ]),
    );
    expect(results).toEqual(ids.flatMap(() => [{ kind: "started", number: 1 }, "finished", 2]));
    expect(logged()).toEqual(ids.map((id) => ({ id, status: "succeeded", attempts: 2, rows: 2 })));
  });

  test("a write that fails is rolled back and rejected alone; the others in its batch commit", async () => {
    // Attempt 1 of d5 is there already, so recording d5's first attempt breaks the primary key.
    api.run(
      `INSERT INTO delivery_attempts (tenant_id, delivery_id, attempt, started_at, duration_ms) VALUES ('t', 'd5', 1, 0, 0)`,
    );
    const settled = await Promise.allSettled(
      ids.map((id) => store.recordAttempt("t", id, attempt, "succeeded")),
    );
    expect(settled.map((s) => s.status)).toEqual(ids.map((id) => (id === "d5" ? "rejected" : "fulfilled")));
    expect(logged()).toEqual(
      ids.map((id) =>
        id === "d5"
          ? { id, status: "pending", attempts: 0, rows: 1 }
          : { id, status: "succeeded", attempts: 1, rows: 1 },
      ),
    );
  });

  test("close commits what is still waiting", async () => {
    const recorded = store.recordAttempt("t", "d1", attempt, "succeeded");
    await store.close();
    expect(await recorded).toBe(1);
    expect(logged()[0]).toEqual({ id: "d1", status: "succeeded", attempts: 1, rows: 1 });
    store = await openDeliveryStore({ engine: "sqlite", path: join(dir, "store.sqlite") });
  });
});

/** The WAL header's checkpoint sequence number: SQLite adds one each time it starts the WAL over. */
const walRestarts = async (path: string) =>
  new DataView(await Bun.file(`${path}-wal`).slice(12, 16).arrayBuffer()).getUint32(0);

test("the dispatcher's commits never checkpoint on its thread: a worker does, and the WAL starts over under SQLite's own 1,000 pages", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tds-dispatcher-checkpoints-"));
  const path = join(dir, "store.sqlite");
  const api = new Database(path, { create: true, strict: true });
  api.run("PRAGMA journal_mode = WAL");
  migrate(api);
  api.run(`INSERT INTO webhooks (tenant_id, id, name, url, type, query, headers, secret, enabled, version, created_at, updated_at)
           VALUES ('t', 'w', 'w', 'http://r/', 'graphql', 'subscription { x }', '{}', 'sealed', 1, 1, 0, 0)`);
  const store = await openDeliveryStore({ engine: "sqlite", path });
  try {
    const before = await walRestarts(path);
    // Attempts logged one turn of the event loop apart, a few pages a commit: about 300 pages in
    // all, under the 1,000 at which a commit would checkpoint itself, so only a worker's checkpoint
    // can have the WAL start over.
    for (let i = 0; i < 100; i++) {
      api.run(
        `INSERT INTO deliveries (tenant_id, id, webhook_id, event_id, status, body, attempts, committed_at, created_at, updated_at)
         VALUES ('t', ?, 'w', ?, 'pending', '[]', 0, 0, 0, 0)`,
        [`c${i}`, `m-c${i}`],
      );
      await new Promise((resolve) => setImmediate(resolve));
      await store.startAttempt({
        tenantId: "t",
        deliveryId: `c${i}`,
        webhookId: "w",
        webhookVersion: 1,
        startedAt: i,
        request: { url: "http://r/", headers: {} },
      });
      if (i % 20 === 0) await Bun.sleep(60);
    }
    await Bun.sleep(120);
    await store.recordAttempt("t", "c0", attempt, "succeeded");
    expect(await walRestarts(path)).toBeGreaterThan(before);
  } finally {
    await store.close();
    api.close();
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);
