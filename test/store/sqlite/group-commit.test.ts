/**
 * SQLite's units of work committed in groups (api/store/sqlite/group-commit.ts),
 * on a real store file: units arriving while one runs commit together, each
 * answered only once its group committed; one that throws is rolled back
 * alone; a lone unit that throws leaves nothing. And WAL checkpoints run on
 * a worker thread, not in the commits.
 */
// @test-engines sqlite: group commit is the SQLite engine's own
import { Database } from "bun:sqlite";
import { afterEach, beforeEach, expect, test } from "bun:test";
import { join } from "node:path";
import { openStore } from "../../../api/store/open-store.ts";
import { createSqliteStore } from "../../../api/store/sqlite/sqlite-store.ts";
import type { Store } from "../../../api/store/store.ts";
import { openSqliteEngine } from "../../../common/store/sqlite/sqlite-engine.ts";
import { storeLocationOf } from "../../../common/store/store-location.ts";
import { makeTempDir, removeTempDir } from "../../support/temp-dirs.ts";
import { tenant } from "../conformance/fixtures.ts";

let dir: string;
let store: Store;
let elsewhere: Database;
beforeEach(async () => {
  dir = makeTempDir("tds-group-commit-");
  store = await openStore(storeLocationOf({ DATA_DIR: dir }));
  // Another connection to the file, as another process would read it.
  elsewhere = new Database(join(dir, "store.sqlite"), { readonly: true });
});
afterEach(async () => {
  elsewhere.close();
  await store.close();
  removeTempDir(dir);
});

const committedTenants = (ids: string[]) =>
  elsewhere
    .query<{ id: string }, string[]>(`SELECT id FROM tenants WHERE id IN (${ids.map(() => "?").join(", ")})`)
    .all(...ids)
    .map((row) => row.id);

test("units handed in within one turn of the event loop commit together, each answered only once committed; one that throws is rolled back alone", async () => {
  const tenants = Array.from({ length: 20 }, (_, i) => tenant(`t${i}`));
  const ids = tenants.map((t) => t.id);
  const events: string[] = [];
  const seenWhenAnswered: number[] = [];
  const units = tenants.map((t, i) =>
    store
      .unitOfWork(async (tx) => {
        events.push(`run ${i}`);
        await tx.insertTenant(t);
        if (i === 7) throw new Error("unit 7 fails after writing");
        return i;
      })
      .then((value) => {
        events.push(`answered ${i}`);
        seenWhenAnswered.push(committedTenants([t.id]).length);
        return value;
      }),
  );
  const outcomes = await Promise.allSettled(units);
  expect(outcomes[7]).toEqual({ status: "rejected", reason: new Error("unit 7 fails after writing") });
  expect(
    outcomes.filter((o) => o.status === "fulfilled").map((o) => (o as PromiseFulfilledResult<number>).value),
  ).toEqual(ids.map((_, i) => i).filter((i) => i !== 7));
  // Every unit's tenant but 7's is there, seen from another connection.
  expect(committedTenants(ids).sort()).toEqual(ids.filter((_, i) => i !== 7).sort());
  // Each was committed when answered.
  expect(seenWhenAnswered).toEqual(Array(19).fill(1));
  // All 20 arrived in one turn: they ran in one group, in order, before any of them was answered.
  expect(events.slice(0, 20)).toEqual(ids.map((_, i) => `run ${i}`));
});

test("units arriving while a group runs wait for the next group", async () => {
  const events: string[] = [];
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const first = store.unitOfWork(async (tx) => {
    events.push("run first");
    await tx.insertTenant(tenant("first"));
    await held;
  });
  // The first group is under way (its unit waits) when the second unit arrives, a turn later.
  while (events.length === 0) await new Promise((resolve) => setImmediate(resolve));
  const second = store.unitOfWork(async (tx) => {
    events.push("run second");
    await tx.insertTenant(tenant("second"));
  });
  await new Promise((resolve) => setImmediate(resolve));
  expect(events).toEqual(["run first"]);
  release();
  await first;
  events.push("answered first");
  await second;
  // Answered first: its own group committed before the second began.
  expect(events).toEqual(["run first", "answered first", "run second"]);
});

test("a lone unit that throws leaves nothing; the next commits", async () => {
  const failing = tenant("failing");
  const next = tenant("next");
  await expect(
    store.unitOfWork(async (tx) => {
      await tx.insertTenant(failing);
      throw new Error("no");
    }),
  ).rejects.toThrow("no");
  await store.unitOfWork((tx) => tx.insertTenant(next));
  expect(committedTenants([failing.id, next.id])).toEqual([next.id]);
});

/** The WAL header's checkpoint sequence number: SQLite adds one each time it starts the WAL over. */
const walRestarts = async (dir: string) =>
  new DataView(await Bun.file(join(dir, "store.sqlite-wal")).slice(12, 16).arrayBuffer()).getUint32(0);

test("commits never checkpoint on the writer's thread: a worker does, and the WAL starts over", async () => {
  const engineDir = makeTempDir("tds-checkpoints-");
  const engine = openSqliteEngine(join(engineDir, "store.sqlite"));
  const own = createSqliteStore(engine);
  try {
    // SQLite's default is 1000 pages, checkpointed by the commit that passes them: now a backstop.
    expect(
      engine.connection.query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint").get(),
    ).toEqual({
      wal_autocheckpoint: 10_000,
    });
    await own.unitOfWork((tx) => tx.insertTenant(tenant("first")));
    const before = await walRestarts(engineDir);
    // Requests arriving one after another (a turn of the event loop each), about 3 pages a commit:
    // under the backstop, so only the worker's checkpoints can have the WAL start over.
    for (let i = 0; i < 1500; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      await own.unitOfWork((tx) => tx.insertTenant(tenant(`t${i}`)));
    }
    await Bun.sleep(300);
    await own.unitOfWork((tx) => tx.insertTenant(tenant("last")));
    expect(await walRestarts(engineDir)).toBeGreaterThan(before);
  } finally {
    await own.close();
    removeTempDir(engineDir);
  }
}, 60_000);
