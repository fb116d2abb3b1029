/**
 * How the PostgreSQL change log is read: a reader goes on from each
 * partition's own position, through the (partition, position, idx) index, so
 * a read costs the entries it returns, not the entries other partitions have
 * passed. With one bound for all partitions (the lowest position), a
 * partition 20,000 entries ahead made every read rescan those 20,000 (the
 * bench's reader, catching up after a 400k-entry load, took 0.7 s a batch).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "../../../api/store/postgres/change-log-session.ts";
import { decodeCursor, encodeCursor, partitionOf } from "../../../api/store/postgres/feed-cursor.ts";
import { openPostgresStore } from "../../../api/store/postgres/postgres-store.ts";
import type { Store } from "../../../api/store/store.ts";
import { createTestDatabase, type TestDatabase } from "../../support/private-postgres.ts";

const AHEAD = 20_000;
const LIMIT = 100;

let database: TestDatabase;
let store: Store;
const tenant = "tenant-ahead";
const partition = partitionOf(tenant);
beforeAll(async () => {
  database = await createTestDatabase("change log reads");
  store = await openPostgresStore(database.url);
  // One partition's 20,000 entries, every other partition empty.
  await database.sql.unsafe(
    `INSERT INTO change_log (position, idx, partition, tenant_id, object_name, operation, uid, mutation_id,
       sequence, committed_at)
     SELECT g, 0, $1, $2, 'Things', 'INSERT', 'u' || g, 'm' || g, 0, 1 FROM generate_series(1, $3) g`,
    [partition, tenant, AHEAD],
  );
  await database.sql.unsafe("ANALYZE change_log");
}, 60_000);
afterAll(async () => {
  await store?.close();
  await database?.drop();
});

/** A cursor past every entry of the busy partition, at the start of every other. */
const pastTheBusyPartition = () =>
  decodeCursor(null).map((p, i) => (i === partition ? { ticket: AHEAD, index: 0 } : p));

/** Rows every scan of change_log in the statement's plan read (returned or removed by its filter). */
async function rowsScanned(sql: string, params: unknown[]): Promise<number> {
  const [row] = (await database.sql.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params)) as {
    "QUERY PLAN": { Plan: PlanNode }[];
  }[];
  let scanned = 0;
  const walk = (node: PlanNode) => {
    if (node["Relation Name"] === "change_log")
      scanned += (node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0)) * node["Actual Loops"];
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(row?.["QUERY PLAN"][0]?.Plan as PlanNode);
  return scanned;
}
interface PlanNode {
  "Relation Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

test("a read past a partition far ahead of the others scans what it returns, not what that partition passed", async () => {
  const positions = pastTheBusyPartition();
  const params = [positions.map((p) => String(p.ticket)), positions.map((p) => String(p.index)), LIMIT];
  expect(await rowsScanned(SQL.changes, params)).toBeLessThanOrEqual(LIMIT);
  expect((await store.readChanges(encodeCursor(positions), LIMIT)).entries).toEqual([]);
});

test("the backlog after such a cursor is counted without scanning the passed entries", async () => {
  const positions = pastTheBusyPartition();
  const params = [positions.map((p) => String(p.ticket)), positions.map((p) => String(p.index))];
  expect(await rowsScanned(SQL.lag, params)).toBeLessThanOrEqual(LIMIT);
  expect((await store.changeLogLag(encodeCursor(positions))).changes).toBe(0);
  // And from the start, every entry is there to read.
  expect((await store.changeLogLag(null)).changes).toBe(AHEAD);
  expect((await store.readChanges(null, LIMIT)).entries.map((e) => e.uid)).toEqual(
    Array.from({ length: LIMIT }, (_, i) => `u${i + 1}`),
  );
});
