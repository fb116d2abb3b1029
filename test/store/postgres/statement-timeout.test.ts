// @test-engines postgres: it tests the PostgreSQL engine's statement time limit and each tenant's share of its pool
/**
 * What bounds one tenant's slow reads on PostgreSQL: the statement time limit
 * (a statement past it is canceled by the server and answered LIMIT_EXCEEDED,
 * its connection given back) and each tenant's share of the pool (⌈pool ÷ 2⌉
 * record reads at once per process), so that another tenant's read and
 * mutation still get a connection while one tenant's reads fill its share.
 * Slow reads are made by a lock: a read of a table another session holds
 * ACCESS EXCLUSIVE waits, and that wait counts against statement_timeout.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { openPostgresStore } from "../../../api/store/postgres/postgres-store.ts";
import type { Store } from "../../../api/store/store.ts";
import { LimitExceededError } from "../../../common/errors.ts";
import { eventually } from "../../support/eventually.ts";
import { createTestDatabase, type TestDatabase } from "../../support/private-postgres.ts";
import { newRecord, tenant, USERS } from "../conformance/fixtures.ts";

let database: TestDatabase;
const opened: Store[] = [];
beforeAll(async () => {
  database = await createTestDatabase("statement timeout");
});
afterAll(async () => {
  for (const store of opened) await store.close();
  await database?.drop();
});

async function open(statementTimeoutMs: number): Promise<Store> {
  const store = await openPostgresStore(database.url, { maxConnections: 4, statementTimeoutMs });
  opened.push(store);
  return store;
}

/** A new tenant with one Users record; its id, the record's uid and its table (schema-qualified). */
async function seeded(store: Store, name: string) {
  const t = tenant(name);
  const uid = crypto.randomUUID();
  await store.unitOfWork(async (tx) => {
    await tx.insertTenant(t);
    await tx.ensureObjectStorage(t.id, USERS);
    await tx.insertRecord(t.id, USERS, { ...newRecord(USERS, uid, {}), UID: uid });
  });
  const [row] = (await database.sql.unsafe("SELECT storage_no FROM tenants WHERE id = $1", [t.id])) as {
    storage_no: string;
  }[];
  return { id: t.id, uid, table: `"t${row?.storage_no}"."${USERS.mapping}"` };
}

/** Holds `table` ACCESS EXCLUSIVE on a connection of the test's own until the release. */
async function lock(table: string) {
  const blocker = await database.sql.reserve();
  await blocker.unsafe("BEGIN");
  await blocker.unsafe(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  return async () => {
    await blocker.unsafe("ROLLBACK");
    blocker.release();
  };
}

/** Backends of the database waiting on a lock (the store's reads stuck behind `lock`). */
async function waitingOnLocks(): Promise<number> {
  const [row] = (await database.sql.unsafe(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
  )) as { n: number }[];
  return row?.n ?? 0;
}

test("a read past the statement time limit answers LIMIT_EXCEEDED naming the limit, and gives its connection back", async () => {
  const store = await open(300);
  const a = await seeded(store, "slow");
  const release = await lock(a.table);
  try {
    const read = store.findRecords(a.id, USERS, [a.uid]);
    await expect(read).rejects.toBeInstanceOf(LimitExceededError);
    await expect(read).rejects.toThrow("the query ran longer than 300 ms (STORE_STATEMENT_TIMEOUT_MS)");
    // Canceled on the server, not only given up on by the client: nothing waits on the lock any more.
    await eventually(async () => expect(await waitingOnLocks()).toBe(0));
  } finally {
    await release();
  }
  // The pool works on: every connection answers.
  const reads = Array.from({ length: 8 }, () => store.findRecords(a.id, USERS, [a.uid]));
  for (const records of await Promise.all(reads)) expect(records.map((r) => r.UID)).toEqual([a.uid]);
});

test("with one tenant's reads filling its share of the pool, another tenant's read and mutation still run", async () => {
  // A limit far past the test: A's reads wait on the lock until it is released.
  const store = await open(60_000);
  const a = await seeded(store, "hog");
  const b = await seeded(store, "neighbour");
  const release = await lock(a.table);
  let released = false;
  try {
    // Six reads for a pool of 4: its share (2) waits on the lock, the rest waits for the share.
    const hogging = Array.from({ length: 6 }, () => store.findRecords(a.id, USERS, [a.uid]));
    await eventually(async () => expect(await waitingOnLocks()).toBe(2));
    const uid = crypto.randomUUID();
    const neighbour = (async () => {
      const found = await store.findRecords(b.id, USERS, [b.uid]);
      await store.unitOfWork((tx) =>
        tx.insertRecord(b.id, USERS, { ...newRecord(USERS, uid, {}), UID: uid }),
      );
      return [found.length, (await store.findRecords(b.id, USERS, [uid])).length];
    })();
    // A functional deadline, not a speed check: without the share, B waits for A's reads, which wait for the lock.
    const outcome = await Promise.race([
      neighbour,
      Bun.sleep(10_000).then(() => "stuck behind the other tenant"),
    ]);
    expect(outcome).toEqual([1, 1]);
    await release();
    released = true;
    for (const records of await Promise.all(hogging)) expect(records).toHaveLength(1);
  } finally {
    if (!released) await release();
  }
});
