// @test-engines sqlite: it tests the SQLite engine itself (its file, WAL, migrations)
/** What only the SQLite engine does (the port's contracts are in ../store-conformance.test.ts). */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../../api/store/open-store.ts";
import { MIGRATIONS, migrate } from "../../../common/store/sqlite/migrations.ts";
import { customObject, seedTenant } from "../conformance/fixtures.ts";

describe("sqlite engine specifics", () => {
  test("runs in WAL mode", async () => {
    const walDir = mkdtempSync(join(tmpdir(), "tds-store-"));
    const store = await openStore({ engine: "sqlite", path: join(walDir, "s.sqlite") });
    const db = new Database(join(walDir, "s.sqlite"));
    expect(db.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode).toBe("wal");
    db.close();
    void store.close().then(() => rmSync(walDir, { recursive: true, force: true }));
  });

  test("migrations apply once, in order, and record their versions", () => {
    const db = new Database(":memory:");
    expect(migrate(db)).toBe(MIGRATIONS.length);
    expect(migrate(db)).toBe(0);
    const more = [...MIGRATIONS, { version: 99, name: "extra", sql: "CREATE TABLE extra (x INTEGER)" }];
    expect(migrate(db, more)).toBe(1);
    const versions = db
      .query<{ version: number }, []>("SELECT version FROM schema_migrations ORDER BY version")
      .all();
    expect(versions.map((v) => v.version)).toEqual([...MIGRATIONS.map((m) => m.version), 99]);
  });

  test("deliveries in parts: a delivery logged before keeps its row as part 0; parts of one mutation fit beside it", () => {
    const db = new Database(":memory:");
    migrate(
      db,
      MIGRATIONS.filter((m) => m.version <= 6),
    );
    const insert = (id: string, part?: number) =>
      db.run(
        `INSERT INTO deliveries (tenant_id, id, webhook_id, mutation_id, ${part === undefined ? "" : "part, "}status, body, attempts, committed_at, created_at, updated_at)
         VALUES ('t', ?, 'w', 'm', ${part === undefined ? "" : `${part}, `}'succeeded', '[1]', 1, 5, 6, 7)`,
        [id],
      );
    insert("d0");
    expect(() => insert("d1")).toThrow(/UNIQUE/);
    migrate(
      db,
      MIGRATIONS.filter((m) => m.version < 12),
    );
    expect(db.query("SELECT id, mutation_id, part, status, body, attempts FROM deliveries").all()).toEqual([
      { id: "d0", mutation_id: "m", part: 0, status: "succeeded", body: "[1]", attempts: 1 },
    ]);
    insert("d1", 1);
    expect(() => insert("d2", 1)).toThrow(/UNIQUE/);
    const indexes = db
      .query<{ name: string }, []>(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'deliveries' AND sql IS NOT NULL ORDER BY name",
      )
      .all();
    expect(indexes.map((i) => i.name)).toEqual(["deliveries_by_age", "deliveries_by_webhook"]);
  });

  test("delivery events (migration 12): a delivery logged before keeps its mutation id as its event id, still unique per webhook × event × part", () => {
    const db = new Database(":memory:");
    migrate(
      db,
      MIGRATIONS.filter((m) => m.version < 12),
    );
    db.run(`INSERT INTO deliveries (tenant_id, id, webhook_id, mutation_id, part, status, body, attempts, committed_at, created_at, updated_at)
            VALUES ('t', 'd0', 'w', 'm', 0, 'succeeded', '[1]', 1, 5, 6, 7)`);
    migrate(db);
    expect(db.query("SELECT id, event_id, part FROM deliveries").all()).toEqual([
      { id: "d0", event_id: "m", part: 0 },
    ]);
    const insert = (id: string, eventId: string) =>
      db.run(
        `INSERT INTO deliveries (tenant_id, id, webhook_id, event_id, part, status, body, attempts, committed_at, created_at, updated_at)
         VALUES ('t', ?, 'w', ?, 0, 'pending', '[]', 0, 5, 6, 7)`,
        [id, eventId],
      );
    expect(() => insert("d1", "m")).toThrow(/UNIQUE/);
    insert("d2", "tick:60000");
    insert("d3", "deferred:u1:60000");
    expect(() => insert("d4", "tick:60000")).toThrow(/UNIQUE/);
  });

  test("no triggers: webhook set versions are moved by code (an engine without triggers does the same); those reached before stay", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tds-store-"));
    const path = join(dir, "s.sqlite");
    try {
      // A store of before: its triggers moved the version.
      const old = new Database(path, { create: true });
      migrate(
        old,
        MIGRATIONS.filter((m) => m.version <= 9),
      );
      old.run("INSERT INTO tenants (id, name, created_at) VALUES ('t', 't', 0)");
      old.run(`INSERT INTO webhooks (tenant_id, id, name, url, type, query, headers, secret, enabled, version, created_at, updated_at)
               VALUES ('t', 'w', 'w', 'https://x.example/', 'graphql', 'q', '{}', 's', 1, 1, 0, 0)`);
      old.close();

      const store = await openStore({ engine: "sqlite", path });
      const triggers = new Database(path, { readonly: true });
      expect(triggers.query("SELECT name FROM sqlite_master WHERE type = 'trigger'").all()).toEqual([]);
      triggers.close();
      expect(await store.webhookSetVersion("t")).toBe(1);
      expect(await store.unitOfWork((tx) => tx.deleteWebhook("t", "w"))).toBe(true);
      // One write, one step: with the triggers still there, it would count twice.
      expect(await store.webhookSetVersion("t")).toBe(2);
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a failing migration leaves the database at the previous version", () => {
    const db = new Database(":memory:");
    migrate(db);
    const broken = [
      ...MIGRATIONS,
      { version: 50, name: "broken", sql: "CREATE TABLE ok (x); CREATE TABLE tenants (y)" },
    ];
    expect(() => migrate(db, broken)).toThrow();
    expect(db.query("SELECT name FROM sqlite_master WHERE name = 'ok'").get()).toBeNull();
    expect(db.query<{ v: number }, []>("SELECT max(version) AS v FROM schema_migrations").get()?.v).toBe(
      MIGRATIONS.at(-1)?.version ?? 0,
    );
  });

  test("catalogue DDL runs in the unit of work's transaction: a rolled-back object leaves no table", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tds-store-"));
    const path = join(dir, "s.sqlite");
    const store = await openStore({ engine: "sqlite", path });
    try {
      const { tenant } = await seedTenant(store);
      // The tenants' record tables: t<storage no>_<object mapping>.
      const tables = () =>
        new Database(path, { readonly: true })
          .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
          .all()
          .map((row) => row.name)
          .filter((name) => /^t\d+_/.test(name));
      const before = tables();
      expect(before.some((name) => name.endsWith("___owners"))).toBe(true);
      await store
        .unitOfWork(async (tx) => {
          await tx.createCustomObject(tenant.id, customObject("Shelves", {}));
          throw new Error("rolled back");
        })
        .catch(() => undefined);
      expect(tables()).toEqual(before);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
