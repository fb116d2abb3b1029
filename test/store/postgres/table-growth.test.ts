// @test-engines postgres: it tests the PostgreSQL engine itself, on the run's private cluster
/**
 * The engine analyzes the tables it fills as they grow (table-growth.ts): once
 * this process wrote the first rows, then each time that count doubles, so
 * that the plans it keeps are not made from a table never analyzed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { openPostgresStore } from "../../../api/store/postgres/postgres-store.ts";
import type { Store } from "../../../api/store/store.ts";
import { eventually } from "../../support/eventually.ts";
import { createTestDatabase, type TestDatabase } from "../../support/private-postgres.ts";
import { newRecord, tenant, USERS } from "../conformance/fixtures.ts";

let database: TestDatabase;
let store: Store;
beforeAll(async () => {
  database = await createTestDatabase("table growth");
  store = await openPostgresStore(database.url, { analyzeAfterRows: 10 });
});
afterAll(async () => {
  await store?.close();
  await database?.drop();
});

test("a table is analyzed once the first rows are written, then each time their count doubles", async () => {
  const t = tenant("growth");
  await store.unitOfWork(async (tx) => {
    await tx.insertTenant(t);
    await tx.ensureObjectStorage(t.id, USERS);
  });
  const analyses = async () => {
    const [row] = (await database.sql.unsafe(
      "SELECT analyze_count::int AS n FROM pg_stat_user_tables WHERE relname = $1 AND schemaname <> 'public'",
      [USERS.mapping],
    )) as { n: number }[];
    return row?.n ?? 0;
  };
  const insert = (count: number) =>
    store.unitOfWork(async (tx) => {
      // Users records, each created by itself (the one reference a bare tenant's record can hold).
      for (let i = 0; i < count; i++) {
        const uid = crypto.randomUUID();
        await tx.insertRecord(t.id, USERS, { ...newRecord(USERS, uid, {}), UID: uid });
      }
    });

  await insert(9);
  await store.close(); // waits for any ANALYZE under way
  expect(await analyses()).toBe(0);
  store = await openPostgresStore(database.url, { analyzeAfterRows: 10 });
  // This process's count starts again: 10 rows written by it make the first.
  await insert(10);
  await eventually(async () => expect(await analyses()).toBe(1));
  await insert(9);
  await Bun.sleep(300);
  expect(await analyses()).toBe(1);
  await insert(1);
  await eventually(async () => expect(await analyses()).toBe(2));
});
