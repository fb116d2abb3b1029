/**
 * The PostgreSQL store's change-log partitions (P): settled by the first
 * process to open a new store, the same for every process after, refused in
 * one line naming both values when a process asks for another; a store made
 * by the previous migrations (16 partitions, one text cursor per reader)
 * opens, its readers going on where they were in each partition; a commit's
 * NOTIFY names its partition; a unit of work cannot mix tenants.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { ChangeEntry } from "../../../api/model/record-values.ts";
import { partitionOfTenant } from "../../../api/store/feed-partitions.ts";
import { openPostgresStore } from "../../../api/store/postgres/postgres-store.ts";
import type { Store } from "../../../api/store/store.ts";
import { ConfigError } from "../../../common/errors.ts";
import { migrate } from "../../../common/store/postgres/migrate.ts";
import { MIGRATIONS } from "../../../common/store/postgres/migrations.ts";
import { eventually } from "../../support/eventually.ts";
import { createTestDatabase, type TestDatabase } from "../../support/private-postgres.ts";
import { PREVIOUS_MIGRATIONS } from "./fixtures/previous-migrations.ts";

const databases: TestDatabase[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const database of databases.splice(0)) await database.drop();
});

async function database(label: string, migrated = false): Promise<TestDatabase> {
  const created = await createTestDatabase(label, { migrated });
  databases.push(created);
  return created;
}

async function open(url: string, feedPartitions?: number): Promise<Store> {
  const store = await openPostgresStore(url, feedPartitions === undefined ? {} : { feedPartitions });
  stores.push(store);
  return store;
}

/** The one problem line of the refusal `opening` rejects with. */
async function refusal(opening: Promise<unknown>): Promise<string> {
  const error = await opening.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  const problems = (error as ConfigError).problems;
  expect(problems).toHaveLength(1);
  return problems[0] as string;
}

const entry = (tenantId: string, mutationId: string, sequence = 0): ChangeEntry => ({
  tenantId,
  objectName: "Things",
  operation: "INSERT",
  uid: crypto.randomUUID(),
  before: null,
  after: { Name: mutationId },
  mutationId,
  sequence,
  committedAt: Date.now(),
});

/** A tenant id in `partition` of `partitions`. */
function tenantIn(partition: number, partitions: number): string {
  for (;;) {
    const id = crypto.randomUUID();
    if (partitionOfTenant(id, partitions) === partition) return id;
  }
}

describe("P, the change log's partitions", () => {
  test("a new store takes the P it is first opened with; unset later, it keeps it; another P is refused in one line naming both", async () => {
    const { url, sql } = await database("p settled", true);
    const first = await open(url, 5);
    expect(first.feedPartitions()).toBe(5);
    expect((await open(url)).feedPartitions()).toBe(5);
    expect((await open(url, 5)).feedPartitions()).toBe(5);
    const line = await refusal(openPostgresStore(url, { feedPartitions: 16 }));
    expect(line).toStartWith("FEED_PARTITIONS:");
    expect(line).toContain("created with 5 partitions");
    expect(line).toContain("FEED_PARTITIONS=16");
    expect(line).not.toContain("\n");
    // The refused opening changed nothing.
    const [row] = (await sql.unsafe("SELECT count(*)::int AS n FROM feed_locks")) as { n: number }[];
    expect(row?.n).toBe(5);
  });

  test("unset on a new store: 16", async () => {
    const { url } = await database("p default", true);
    expect((await open(url)).feedPartitions()).toBe(16);
  });

  test("processes opening a new store at once with different P settle one; the others are refused", async () => {
    const { url } = await database("p race");
    const wanted = [3, 7, 3, 7, 3, 7];
    const outcomes = await Promise.allSettled(
      wanted.map((p) => openPostgresStore(url, { feedPartitions: p })),
    );
    const opened = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
    stores.push(...opened);
    const settled = new Set(opened.map((store) => store.feedPartitions()));
    expect(settled.size).toBe(1);
    const [p] = [...settled];
    expect(opened).toHaveLength(3);
    for (const outcome of outcomes)
      if (outcome.status === "rejected") expect(outcome.reason).toBeInstanceOf(ConfigError);
    expect(outcomes.filter((o) => o.status === "rejected")).toHaveLength(3);
    expect([3, 7]).toContain(p as number);
  });

  test("every partition orders its own commits: entries of P partitions, each read back in its own order", async () => {
    const { url } = await database("p in use", true);
    const store = await open(url, 3);
    const tenants = [0, 1, 2].map((p) => tenantIn(p, 3));
    for (const round of [1, 2])
      for (const tenantId of tenants)
        await store.unitOfWork((tx) => tx.appendChanges([entry(tenantId, `${tenantId}/${round}`)]));
    for (const [p, tenantId] of tenants.entries()) {
      const { entries } = await store.readChanges(p, null, 10);
      expect(entries.map((e) => e.mutationId)).toEqual([`${tenantId}/1`, `${tenantId}/2`]);
    }
  });
});

describe("a store made by the previous migrations", () => {
  test("opens with its 16 partitions, each reader going on from its old cursor's position there", async () => {
    const { url, sql } = await database("previous store");
    await migrate(sql, PREVIOUS_MIGRATIONS);
    // As the previous engine wrote them: tickets from the sequence, each entry in its tenant's partition.
    const a = tenantIn(2, 16);
    const b = tenantIn(9, 16);
    const insert = (ticket: number, tenantId: string, mutationId: string) =>
      sql.unsafe(
        `INSERT INTO change_log (position, idx, partition, tenant_id, object_name, operation, uid, mutation_id,
           sequence, committed_at) VALUES ($1, 0, $2, $3, 'Things', 'INSERT', $4, $5, 0, $6)`,
        [ticket, partitionOfTenant(tenantId, 16), tenantId, crypto.randomUUID(), mutationId, Date.now()],
      );
    await insert(1, a, "a1");
    await insert(2, b, "b1");
    await insert(3, a, "a2");
    await insert(4, b, "b2");
    await sql.unsafe("SELECT setval('change_log_positions', 4)");
    // "main" had read a1 and b1 (partitions 2 and 9); "slow" nothing but a1.
    const cursor = (at: Record<number, string>) =>
      `pg:${Array.from({ length: 16 }, (_, p) => at[p] ?? "0.0").join(",")}`;
    await sql.unsafe(
      "INSERT INTO feed_positions (name, cursor, updated_at) VALUES ($1, $2, 1), ($3, $4, 1)",
      ["main", cursor({ 2: "1.0", 9: "2.0" }), "slow", cursor({ 2: "1.0" })],
    );

    const store = await open(url);
    expect(store.feedPartitions()).toBe(16);
    const readOn = async (name: string, p: number) =>
      (await store.readChanges(p, await store.feedPosition(name, p), 10)).entries.map((e) => e.mutationId);
    expect(await readOn("main", 2)).toEqual(["a2"]);
    expect(await readOn("main", 9)).toEqual(["b2"]);
    expect(await readOn("slow", 2)).toEqual(["a2"]);
    expect(await readOn("slow", 9)).toEqual(["b1", "b2"]);
    expect(await store.feedPosition("main", 0)).toBeNull();
    // New commits go on in each partition after the old ones, in their partition's order.
    await store.unitOfWork((tx) => tx.appendChanges([entry(a, "a3")]));
    expect(await readOn("main", 2)).toEqual(["a2", "a3"]);
    // Retention: a1, passed by both readers in partition 2, goes; "slow" has not passed b1 in 9, so it stays.
    expect(await store.unitOfWork((tx) => tx.pruneChanges(Date.now() + 1, 100))).toBe(1);
    expect(await readOn("main", 2)).toEqual(["a2", "a3"]);
    expect(await readOn("slow", 9)).toEqual(["b1", "b2"]);
    // Its P is the one it was made with.
    expect(await refusal(openPostgresStore(url, { feedPartitions: 8 }))).toContain(
      "created with 16 partitions",
    );
    const versions = (await sql.unsafe("SELECT max(version)::int AS v FROM schema_migrations")) as {
      v: number;
    }[];
    expect(versions[0]?.v).toBe(Math.max(...MIGRATIONS.map((m) => m.version)));
  });
});

describe("commits", () => {
  test("a commit's NOTIFY names its partition, on another handle of the store", async () => {
    const { url } = await database("notify partition", true);
    const writer = await open(url, 4);
    const listener = await open(url);
    const heard: number[] = [];
    const stop = listener.onCommitted?.((partition) => heard.push(partition));
    try {
      // The LISTEN is set up on the first listener: let it settle before committing.
      await Bun.sleep(200);
      await writer.unitOfWork((tx) => tx.appendChanges([entry(tenantIn(3, 4), "m")]));
      await writer.unitOfWork((tx) => tx.appendChanges([entry(tenantIn(1, 4), "n")]));
      await eventually(() => expect(heard).toEqual([3, 1]));
    } finally {
      stop?.();
    }
  });

  test("a unit of work appending two tenants' entries is refused, and writes nothing", async () => {
    const { url } = await database("two tenants", true);
    const store = await open(url);
    const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
    await expect(
      store.unitOfWork((tx) => tx.appendChanges([entry(a, "m"), entry(b, "m", 1)])),
    ).rejects.toThrow("one tenant");
    await expect(
      store.unitOfWork(async (tx) => {
        await tx.appendChanges([entry(a, "m")]);
        await tx.appendChanges([entry(b, "m", 1)]);
      }),
    ).rejects.toThrow("one tenant");
    for (let p = 0; p < store.feedPartitions(); p++)
      expect((await store.readChanges(p, null, 10)).entries).toEqual([]);
  });
});
