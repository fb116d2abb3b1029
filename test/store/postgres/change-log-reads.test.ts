/**
 * How the PostgreSQL change log is read: a partition's reader goes on from
 * its position through the (partition, position, idx) index, so a read costs
 * the entries it returns, not the entries it has passed. Before reads went by
 * partition, one read over all of them with one bound had the planner (seeing
 * most entries in one partition, as in the bench's one-tenant load) take the
 * primary key's order and filter out every passed entry: 300,000 rows for a
 * read past 20,000 here, 0.7 s a read at 400k entries in the bench. Then
 * reads went by partition but named it twice, in the row and as an equality:
 * PostgreSQL 15 started each scan at the partition's first index entry and
 * stepped over every passed one (no row read, so only the pages touched show
 * it: 19.6 ms a poll at 400k entries in the bench).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { partitionOfTenant } from "../../../api/store/feed-partitions.ts";
import { SQL } from "../../../api/store/postgres/change-log-session.ts";
import { encodeCursor } from "../../../api/store/postgres/feed-cursor.ts";
import { openPostgresStore } from "../../../api/store/postgres/postgres-store.ts";
import type { Store } from "../../../api/store/store.ts";
import { createTestDatabase, type TestDatabase } from "../../support/private-postgres.ts";

const PASSED = 20_000;
const AHEAD = 50;
const LIMIT = 100;
/** Pages a read of the 50 entries ahead may touch. */
const PAGES = 12;

let database: TestDatabase;
let store: Store;
let partition: number;
beforeAll(async () => {
  database = await createTestDatabase("change log reads");
  store = await openPostgresStore(database.url);
  const tenant = "tenant-busy";
  partition = partitionOfTenant(tenant, store.feedPartitions());
  // One partition's 20,050 entries, every other partition empty.
  await database.sql.unsafe(
    `INSERT INTO change_log (position, idx, partition, tenant_id, object_name, operation, uid, mutation_id,
       sequence, committed_at)
     SELECT g, 0, $1, $2, 'Things', 'INSERT', 'u' || g, 'm' || g, 0, 1 FROM generate_series(1, $3) g`,
    [partition, tenant, PASSED + AHEAD],
  );
  await database.sql.unsafe("ANALYZE change_log");
}, 60_000);
afterAll(async () => {
  await store?.close();
  await database?.drop();
});

/**
 * What the statement's plan read: the rows every scan of change_log read (returned or removed by
 * its filter) and the pages the whole plan touched.
 */
async function scanned(sql: string, params: unknown[]): Promise<{ rows: number; pages: number }> {
  const [row] = (await database.sql.unsafe(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params)) as {
    "QUERY PLAN": { Plan: PlanNode }[];
  }[];
  const plan = row?.["QUERY PLAN"][0]?.Plan as PlanNode;
  let rows = 0;
  const walk = (node: PlanNode) => {
    if (node["Relation Name"] === "change_log")
      rows += (node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0)) * node["Actual Loops"];
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan);
  return { rows, pages: plan["Shared Hit Blocks"] + plan["Shared Read Blocks"] };
}
interface PlanNode {
  "Relation Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  "Shared Hit Blocks": number;
  "Shared Read Blocks": number;
  Plans?: PlanNode[];
}

test("a read 20,000 entries into a partition scans what it returns, not what the reader passed", async () => {
  const read = await scanned(SQL.changes, [partition, PASSED, 0, LIMIT]);
  expect(read.rows).toBeLessThanOrEqual(AHEAD);
  // The index's root and a leaf or two, and the heap pages of the 50 entries: stepping over the
  // 20,000 passed index entries touched 102 pages.
  expect(read.pages).toBeLessThanOrEqual(PAGES);
  const page = await store.readChanges(
    partition,
    encodeCursor(partition, { ticket: PASSED, index: 0 }),
    LIMIT,
  );
  expect(page.entries.map((e) => e.uid)).toEqual(
    Array.from({ length: AHEAD }, (_, i) => `u${PASSED + i + 1}`),
  );
});

test("the backlog after such a cursor is counted without scanning the passed entries", async () => {
  const read = await scanned(SQL.lag, [partition, PASSED, 0]);
  expect(read.rows).toBeLessThanOrEqual(AHEAD);
  expect(read.pages).toBeLessThanOrEqual(PAGES);
  const cursor = encodeCursor(partition, { ticket: PASSED, index: 0 });
  expect((await store.changeLogLag(partition, cursor)).changes).toBe(AHEAD);
  expect((await store.changeLogLag(partition, null)).changes).toBe(PASSED + AHEAD);
});
