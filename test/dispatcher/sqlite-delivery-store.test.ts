import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate } from "../../api/store/sqlite/migrations.ts";
import { openSqliteDeliveryStore } from "../../dispatcher/store/sqlite/sqlite-delivery-store.ts";

describe("SQLite delivery store", () => {
  const dir = mkdtempSync(join(tmpdir(), "tds-dstore-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("opens a store file the API has not migrated yet, and works once it has", async () => {
    const path = join(dir, "store.sqlite");
    const store = openSqliteDeliveryStore(path);
    await expect(store.loadDelivery("t", "d1", "w")).rejects.toThrow("no such table");

    const api = new Database(path, { strict: true });
    migrate(api);
    api.run("INSERT INTO tenants (id, name, created_at) VALUES ('t', 't', 0)");
    api.run(`INSERT INTO deliveries (tenant_id, id, webhook_id, mutation_id, status, body, attempts, committed_at, created_at, updated_at)
             VALUES ('t', 'd1', 'w', 'm', 'pending', '[]', 0, 0, 0, 0)`);
    expect(await store.loadDelivery("t", "d1", "w")).toEqual({ status: "pending", webhook: null });
    expect(await store.loadDelivery("t", "missing", "w")).toEqual({ status: null, webhook: null });

    const attempt = { startedAt: 10, durationMs: 5, statusCode: 500, responseBody: "no", error: "HTTP 500" };
    expect(await store.recordAttempt("t", "d1", attempt, "pending")).toBe(1);
    expect(
      await store.recordAttempt("t", "d1", { ...attempt, statusCode: 200, error: null }, "succeeded"),
    ).toBe(2);
    expect(await store.recordAttempt("t", "missing", attempt, "failed")).toBeNull();
    // A finished delivery is not set back to delivering.
    await store.markDelivering("t", "d1", 20);
    expect((await store.loadDelivery("t", "d1", "w")).status).toBe("succeeded");
    expect(api.query("SELECT attempt, status_code FROM delivery_attempts ORDER BY attempt").all()).toEqual([
      { attempt: 1, status_code: 500 },
      { attempt: 2, status_code: 200 },
    ]);
    api.close();
    await store.close();
  });
});
