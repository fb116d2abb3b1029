/**
 * The change log in commit order on PostgreSQL. First the loss the engine is
 * built against, reproduced: an outbox numbered by a plain bigserial, two
 * transactions committing out of number order, and a reader going on from
 * the highest number it read never sees the one that committed late. Then
 * the engine under the same race: a unit of work stalled after it took its
 * ticket (an uncommitted row holding the key its entry will have, so its
 * insert waits, the ticket taken), while another commits ahead of it; each
 * partition's reader, going on from its cursor, reads its own.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { ChangeEntry } from "../../../api/model/record-values.ts";
import { partitionOfTenant } from "../../../api/store/feed-partitions.ts";
import { openPostgresStore } from "../../../api/store/postgres/postgres-store.ts";
import type { Store } from "../../../api/store/store.ts";
import { eventually } from "../../support/eventually.ts";
import { createTestDatabase, type TestDatabase } from "../../support/private-postgres.ts";

let database: TestDatabase;
let store: Store;
beforeAll(async () => {
  database = await createTestDatabase("commit order");
  // Its units stall behind a row lock on purpose, as long as the test takes.
  store = await openPostgresStore(database.url, { lockTimeoutMs: 60_000 });
});
afterAll(async () => {
  await store?.close();
  await database?.drop();
});

const entry = (tenantId: string, mutationId: string): ChangeEntry => ({
  tenantId,
  objectName: "Things",
  operation: "INSERT",
  uid: crypto.randomUUID(),
  before: null,
  after: { Name: mutationId },
  mutationId,
  sequence: 0,
  committedAt: Date.now(),
});

const partitionOf = (tenantId: string) => partitionOfTenant(tenantId, store.feedPartitions());

/** A tenant id whose change-log partition is (or is not) `partition`. */
function tenantIn(partition: number, same: boolean): string {
  for (;;) {
    const id = crypto.randomUUID();
    if ((partitionOf(id) === partition) === same) return id;
  }
}

/** Every mutation id read in `partition` from `cursor` on, and the cursor reached. */
async function readFrom(partition: number, cursor: Awaited<ReturnType<Store["readChanges"]>>["next"]) {
  const page = await store.readChanges(partition, cursor, 100);
  return { ids: page.entries.map((e) => e.mutationId), next: page.next };
}

/**
 * Stalls the next unit of work that writes change-log entries right after it took its ticket: an
 * uncommitted row holds the key (ticket, 0) its first entry will have. Returns the ticket and the
 * release (which rolls the row back, letting the unit go on).
 */
async function stallNextTicket() {
  const blocker = await database.sql.reserve();
  const [row] = (await blocker.unsafe(
    "SELECT last_value + CASE WHEN is_called THEN 1 ELSE 0 END AS next FROM change_log_positions",
  )) as { next: string }[];
  const ticket = Number(row?.next);
  await blocker.unsafe("BEGIN");
  await blocker.unsafe(
    `INSERT INTO change_log (position, idx, partition, tenant_id, object_name, operation, uid, mutation_id,
       sequence, committed_at) VALUES ($1, 0, 0, 'blocker', 'x', 'INSERT', 'x', 'blocker', 0, 0)`,
    [ticket],
  );
  const release = async () => {
    await blocker.unsafe("ROLLBACK");
    blocker.release();
  };
  return { ticket, release };
}

/** Resolves once some statement waits on a lock (the stalled unit's insert, or a unit behind a partition's lock). */
const waiters = async () => {
  const [row] = (await database.sql.unsafe(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
  )) as { n: number }[];
  return row?.n ?? 0;
};

const ticketOf = async (mutationId: string) => {
  const [row] = (await database.sql.unsafe("SELECT position FROM change_log WHERE mutation_id = $1", [
    mutationId,
  ])) as { position: string }[];
  return Number(row?.position);
};

test("reproduced: a reader of a bigserial outbox loses the entry that commits after a higher one", async () => {
  await database.sql.unsafe("CREATE TABLE naive_outbox (position bigserial PRIMARY KEY, note text)");
  const slow = await database.sql.reserve();
  const fast = await database.sql.reserve();
  try {
    await slow.unsafe("BEGIN");
    await slow.unsafe("INSERT INTO naive_outbox (note) VALUES ('slow')");
    await fast.unsafe("BEGIN");
    await fast.unsafe("INSERT INTO naive_outbox (note) VALUES ('fast')");
    await fast.unsafe("COMMIT");
    const read = async (after: number) =>
      (await database.sql.unsafe(
        "SELECT position, note FROM naive_outbox WHERE position > $1 ORDER BY position",
        [after],
      )) as { position: string; note: string }[];
    const first = await read(0);
    const cursor = Number(first.at(-1)?.position ?? 0);
    await slow.unsafe("COMMIT");
    const then = await read(cursor);
    const seen = [...first, ...then].map((row) => row.note);
    const committed = (await read(0)).map((row) => row.note);
    expect(committed).toEqual(["slow", "fast"]);
    // The loss: "slow" committed, with a number below the cursor the reader had reached.
    expect(seen).toEqual(["fast"]);
  } finally {
    slow.release();
    fast.release();
  }
});

test("a partition's reader is neither held back nor made to skip by another partition's later ticket", async () => {
  const slowTenant = crypto.randomUUID();
  const fastTenant = tenantIn(partitionOf(slowTenant), false);
  const [slowPart, fastPart] = [partitionOf(slowTenant), partitionOf(fastTenant)];
  const stall = await stallNextTicket();
  const slow = store.unitOfWork((tx) => tx.appendChanges([entry(slowTenant, "slow-1")]));
  await eventually(async () => (await waiters()) === 1);
  // Another partition: nothing holds it back. It commits first, with the higher ticket.
  await store.unitOfWork((tx) => tx.appendChanges([entry(fastTenant, "fast-1")]));
  const fast = await readFrom(fastPart, null);
  expect(fast.ids).toEqual(["fast-1"]);
  expect(await ticketOf("fast-1")).toBeGreaterThan(stall.ticket);
  const before = await readFrom(slowPart, null);
  expect(before.ids).toEqual([]);

  await stall.release();
  await slow;
  expect(await ticketOf("slow-1")).toBe(stall.ticket);
  // Its ticket is below the other partition's "fast-1": a reader of the whole log keeping one highest
  // ticket would skip it; the partition's own reader reads it.
  const after = await readFrom(slowPart, before.next);
  expect(after.ids).toEqual(["slow-1"]);
  expect((await readFrom(slowPart, after.next)).ids).toEqual([]);
  expect((await readFrom(fastPart, fast.next)).ids).toEqual([]);
});

test("in one partition, a unit of work cannot commit its entries ahead of one that took a ticket before it", async () => {
  const slowTenant = crypto.randomUUID();
  const sameTenant = tenantIn(partitionOf(slowTenant), true);
  const partition = partitionOf(slowTenant);
  const start = (await readFrom(partition, null)).next;
  const stall = await stallNextTicket();
  const slow = store.unitOfWork((tx) => tx.appendChanges([entry(slowTenant, "slow-2")]));
  await eventually(async () => (await waiters()) === 1);
  let fastDone = false;
  const fast = store
    .unitOfWork((tx) => tx.appendChanges([entry(sameTenant, "fast-2")]))
    .then(() => {
      fastDone = true;
    });
  // The second waits for the partition's lock, held by the stalled first.
  await eventually(async () => (await waiters()) === 2);
  expect(fastDone).toBe(false);
  const during = await readFrom(partition, start);
  expect(during.ids).toEqual([]);

  await stall.release();
  await Promise.all([slow, fast]);
  const after = await readFrom(partition, during.next);
  expect(after.ids).toEqual(["slow-2", "fast-2"]);
  expect(await ticketOf("fast-2")).toBeGreaterThan(await ticketOf("slow-2"));
});

test("a unit of work draws its ticket only once it holds its partition's lock", async () => {
  const tenant = crypto.randomUUID();
  const partition = partitionOf(tenant);
  const holder = await database.sql.reserve();
  const nextTicket = async () => {
    const [row] = (await database.sql.unsafe(
      "SELECT last_value + CASE WHEN is_called THEN 1 ELSE 0 END AS next FROM change_log_positions",
    )) as { next: string }[];
    return Number(row?.next);
  };
  try {
    await holder.unsafe("BEGIN");
    await holder.unsafe("SELECT 1 FROM feed_locks WHERE partition = $1 FOR UPDATE", [partition]);
    const before = await nextTicket();
    const unit = store.unitOfWork((tx) => tx.appendChanges([entry(tenant, "behind-lock")]));
    await eventually(async () => (await waiters()) === 1);
    // Waiting for the lock, it has drawn nothing: a ticket drawn before the lock could be passed by a
    // higher one committed meanwhile by the lock's holder.
    expect(await nextTicket()).toBe(before);
    await holder.unsafe("COMMIT");
    await unit;
    expect(await ticketOf("behind-lock")).toBe(before);
  } finally {
    holder.release();
  }
});
