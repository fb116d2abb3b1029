// @test-engines sqlite: it tests the SQLite delivery store itself
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IN_FLIGHT_ERROR, OUTCOME_UNKNOWN_ERROR } from "../../common/delivery-log/delivery-log.ts";
import { openDeliveryStore } from "../../common/delivery-log/open-delivery-store.ts";
import { createSqliteDeliveryStore } from "../../common/delivery-log/sqlite/sqlite-delivery-store.ts";
import { migrate } from "../../common/store/sqlite/migrations.ts";
import { openSqliteEngine } from "../../common/store/sqlite/sqlite-engine.ts";

/** The request an attempt is logged with (already redacted by the dispatcher). */
const SENT = { url: "https://receiver.example/hook", headers: { "x-key": "{{ KEY }}" } };

/** Webhook `w` of tenant `t` at version 1, as the API stores one. */
const WEBHOOK_W = `INSERT INTO webhooks (tenant_id, id, name, url, type, query, headers, secret, enabled, version, created_at, updated_at)
  VALUES ('t', 'w', 'w', 'https://receiver.example/hook', 'graphql', 'subscription { x }', '{"x-key":"{{ KEY }}"}', 'sealed', 1, 1, 0, 0)`;

/** Attempt of delivery `deliveryId` (tenant t, webhook w at version 1) about to send SENT at `startedAt`. */
const attemptOf = (deliveryId: string, startedAt: number) => ({
  tenantId: "t",
  deliveryId,
  webhookId: "w",
  webhookVersion: 1,
  startedAt,
  request: SENT,
});

describe("SQLite delivery store", () => {
  const dir = mkdtempSync(join(tmpdir(), "tds-dstore-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("opens a store file no API has opened yet: the dispatcher migrates it itself", async () => {
    const path = join(dir, "store.sqlite");
    const store = await openDeliveryStore({ engine: "sqlite", path });
    expect(await store.loadDelivery("t", "d1", "w")).toEqual({ status: null, webhook: null });

    const api = new Database(path, { strict: true });
    expect(migrate(api)).toBe(0);
    api.run("INSERT INTO tenants (id, name, created_at) VALUES ('t', 't', 0)");
    api.run(`INSERT INTO deliveries (tenant_id, id, webhook_id, event_id, status, body, attempts, committed_at, created_at, updated_at)
             VALUES ('t', 'd1', 'w', 'm', 'pending', '[]', 0, 0, 0, 0)`);
    expect(await store.loadDelivery("t", "d1", "w")).toEqual({ status: "pending", webhook: null });
    expect(await store.loadDelivery("t", "missing", "w")).toEqual({ status: null, webhook: null });
    api.run(WEBHOOK_W);
    expect(await store.loadDelivery("t", "d1", "w")).toEqual({
      status: "pending",
      webhook: {
        tenantId: "t",
        id: "w",
        url: "https://receiver.example/hook",
        headers: { "x-key": "{{ KEY }}" },
        sealedSecret: "sealed",
        previousSealedSecret: null,
        previousSecretUntil: null,
        enabled: true,
        disabledReason: null,
        version: 1,
      },
    });

    const attempt = { startedAt: 10, durationMs: 5, statusCode: 500, responseBody: "no", error: "HTTP 500" };
    expect(await store.recordAttempt("t", "d1", attempt, "pending")).toBe(1);
    expect(
      await store.recordAttempt("t", "d1", { ...attempt, statusCode: 200, error: null }, "succeeded"),
    ).toBe(2);
    expect(await store.recordAttempt("t", "missing", attempt, "failed")).toBeNull();
    // A finished delivery (a duplicate job's) is not started again: nothing is logged.
    expect(await store.startAttempt(attemptOf("d1", 20))).toEqual({ kind: "finished", status: "succeeded" });
    expect((await store.loadDelivery("t", "d1", "w")).status).toBe("succeeded");
    expect(await store.startAttempt(attemptOf("missing", 20))).toEqual({ kind: "unlogged" });
    expect(api.query("SELECT attempt, status_code FROM delivery_attempts ORDER BY attempt").all()).toEqual([
      { attempt: 1, status_code: 500 },
      { attempt: 2, status_code: 200 },
    ]);
    api.close();
    await store.close();
  });

  test("an attempt is in the log, in flight, before its request leaves; one a stopped dispatcher left is closed as of unknown outcome", async () => {
    const path = join(dir, "in-flight.sqlite");
    const api = new Database(path, { create: true, strict: true });
    migrate(api);
    api.run("INSERT INTO tenants (id, name, created_at) VALUES ('t', 't', 0)");
    api.run(WEBHOOK_W);
    api.run(`INSERT INTO deliveries (tenant_id, id, webhook_id, event_id, status, body, attempts, committed_at, created_at, updated_at)
             VALUES ('t', 'd1', 'w', 'm', 'pending', '[]', 0, 0, 0, 0)`);
    const logged = () => ({
      delivery: api.query("SELECT status, attempts FROM deliveries WHERE id = 'd1'").get(),
      attempts: api
        .query<Record<string, unknown>, []>(
          "SELECT attempt, started_at, duration_ms, status_code, error, in_flight FROM delivery_attempts ORDER BY attempt",
        )
        .all(),
    });

    // The dispatcher that is killed: its attempt is committed when startAttempt resolves, before any send.
    const killed = await openDeliveryStore({ engine: "sqlite", path });
    expect(await killed.startAttempt(attemptOf("d1", 100))).toEqual({ kind: "started", number: 1 });
    // The request it sends is logged with it, before it leaves.
    expect(api.query("SELECT request FROM delivery_attempts WHERE attempt = 1").get()).toEqual({
      request: JSON.stringify(SENT),
    });
    const inFlight = {
      attempt: 1,
      started_at: 100,
      duration_ms: 0,
      status_code: null,
      error: IN_FLIGHT_ERROR,
      in_flight: 1,
    };
    expect(logged()).toEqual({ delivery: { status: "delivering", attempts: 1 }, attempts: [inFlight] });
    await killed.close();

    // The next dispatcher's attempt closes it as of unknown outcome, then logs its own.
    const next = await openDeliveryStore({ engine: "sqlite", path });
    expect(await next.startAttempt(attemptOf("d1", 200))).toEqual({ kind: "started", number: 2 });
    const unknown = { ...inFlight, error: OUTCOME_UNKNOWN_ERROR, in_flight: 0 };
    expect(logged().attempts).toEqual([unknown, { ...inFlight, attempt: 2, started_at: 200 }]);
    const answer = { startedAt: 201, durationMs: 7, statusCode: 200, responseBody: "ok", error: null };
    await next.finishAttempt("t", "d1", 2, answer, "succeeded");
    expect(logged()).toEqual({
      delivery: { status: "succeeded", attempts: 2 },
      attempts: [
        unknown,
        { attempt: 2, started_at: 201, duration_ms: 7, status_code: 200, error: null, in_flight: 0 },
      ],
    });

    // An attempt that sends nothing closes those left in flight too.
    api.run("UPDATE delivery_attempts SET in_flight = 1, error = 'x' WHERE attempt = 2");
    api.run("UPDATE deliveries SET status = 'pending'");
    expect(
      await next.recordAttempt("t", "d1", { ...answer, statusCode: null, error: "gone" }, "failed"),
    ).toBe(3);
    expect(logged().attempts.map((a) => [a.error, a.in_flight])).toEqual([
      [OUTCOME_UNKNOWN_ERROR, 0],
      [OUTCOME_UNKNOWN_ERROR, 0],
      ["gone", 0],
    ]);
    api.close();
    await next.close();
  });
});

describe("SQLite delivery store: what an attempt costs the connection", () => {
  const dir = mkdtempSync(join(tmpdir(), "tds-dstore-cost-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A store file with tenant t, webhook w (version 1) and pending deliveries `ids`, and the API's connection to it. */
  const storeFile = (name: string, ids: string[]) => {
    const path = join(dir, name);
    const api = new Database(path, { create: true, strict: true });
    migrate(api);
    api.run("INSERT INTO tenants (id, name, created_at) VALUES ('t', 't', 0)");
    api.run(WEBHOOK_W);
    for (const id of ids)
      api.run(`INSERT INTO deliveries (tenant_id, id, webhook_id, event_id, status, body, attempts, committed_at, created_at, updated_at)
               VALUES ('t', '${id}', 'w', 'm-${id}', 'pending', '[]', 0, 0, 0, 0)`);
    return { path, api };
  };
  const answer = { startedAt: 5, durationMs: 2, statusCode: 200, responseBody: "ok", error: null };

  test("logging attempts compiles no statement and looks none up by its text (but the write lock's own)", async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `d${i}`);
    const { path, api } = storeFile("compiled.sqlite", ids);
    const engine = openSqliteEngine(path);
    const store = createSqliteDeliveryStore(engine);
    const db = engine.connection;
    // Counted on the store's own connection: every statement an attempt runs, by the SQL looked up or compiled.
    const compiled: string[] = [];
    for (const name of ["query", "prepare", "run"] as const) {
      const original = db[name].bind(db) as (sql: string, ...rest: unknown[]) => unknown;
      (db as unknown as Record<string, unknown>)[name] = (sql: string, ...rest: unknown[]) => {
        compiled.push(sql);
        return original(sql, ...rest);
      };
    }
    for (const id of ids) {
      const start = await store.startAttempt(attemptOf(id, 1));
      if (start.kind !== "started") throw new Error(`not started: ${start.kind}`);
      await store.finishAttempt("t", id, start.number, answer, "succeeded");
    }
    const lock = (sql: string) => sql === "BEGIN IMMEDIATE" || sql.startsWith("PRAGMA busy_timeout");
    // Each statement used to be looked up by its text at every call: 4 per attempt here.
    expect(compiled.filter((sql) => !lock(sql))).toEqual([]);
    expect(api.query("SELECT count(*) AS n FROM deliveries WHERE status = 'succeeded'").get()).toEqual({
      n: 40,
    });
    api.close();
    await store.close();
  });

  test("a finish finds its attempt by key when its rows moved after the start (rowids reused by others)", async () => {
    const { path, api } = storeFile("moved.sqlite", ["d1", "d2"]);
    const store = await openDeliveryStore({ engine: "sqlite", path });
    expect(await store.startAttempt(attemptOf("d1", 1))).toEqual({ kind: "started", number: 1 });
    const rowid = (table: string, where: string) =>
      (api.query(`SELECT rowid AS r FROM ${table} WHERE ${where}`).get() as { r: number }).r;
    const deliveryRow = rowid("deliveries", "id = 'd1'");
    const attemptRow = rowid("delivery_attempts", "delivery_id = 'd1'");
    // Both rows of d1 move to new rowids; their old ones go to d2's delivery and a d2 attempt.
    api.transaction(() => {
      api.run("UPDATE deliveries SET rowid = (SELECT max(rowid) + 100 FROM deliveries) WHERE id = 'd1'");
      api.run(`UPDATE deliveries SET rowid = ${deliveryRow} WHERE id = 'd2'`);
      api.run("UPDATE delivery_attempts SET rowid = rowid + 100 WHERE delivery_id = 'd1'");
      api.run(`INSERT INTO delivery_attempts (rowid, tenant_id, delivery_id, attempt, started_at, duration_ms, error, in_flight)
               VALUES (${attemptRow}, 't', 'd2', 1, 0, 0, 'other', 1)`);
    })();
    await store.finishAttempt("t", "d1", 1, answer, "succeeded");
    expect(api.query("SELECT id, status FROM deliveries ORDER BY id").all()).toEqual([
      { id: "d1", status: "succeeded" },
      { id: "d2", status: "pending" },
    ]);
    expect(
      api
        .query(
          "SELECT delivery_id, status_code, error, in_flight FROM delivery_attempts ORDER BY delivery_id",
        )
        .all(),
    ).toEqual([
      { delivery_id: "d1", status_code: 200, error: null, in_flight: 0 },
      { delivery_id: "d2", status_code: null, error: "other", in_flight: 1 },
    ]);
    api.close();
    await store.close();
  });
});
