// @test-engines postgres: it tests the PostgreSQL engine itself, on the run's private cluster
/**
 * What the PostgreSQL engine does beyond the conformance suite's contract, or
 * in its own way: migrations when processes start at once, units of work run
 * again when they fail to serialize (and given up, as UnavailableError, past
 * the bound), two units creating one table, text that cannot hold U+0000, and
 * the whole answer's JSON at PostgreSQL's edges (objects past 100 function
 * arguments, the year 0, values the resolvers refuse).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import type { ObjectDef } from "../../../api/model/catalogue.ts";
import { openPostgresStore } from "../../../api/store/postgres/postgres-store.ts";
import type { ReadNode } from "../../../api/store/read-tree.ts";
import type { Store, StoreWriter } from "../../../api/store/store.ts";
import { openDeliveryStore } from "../../../common/delivery-log/open-delivery-store.ts";
import { UnavailableError, ValidationError } from "../../../common/errors.ts";
import { migrate } from "../../../common/store/postgres/migrate.ts";
import { MIGRATIONS } from "../../../common/store/postgres/migrations.ts";
import { storeLocationOf } from "../../../common/store/store-location.ts";
import { createTestDatabase, type TestDatabase } from "../../support/private-postgres.ts";
import { customObject, newRecord, tenant, USERS, user } from "../conformance/fixtures.ts";

let database: TestDatabase;
const opened: Store[] = [];
const open = async (...args: Parameters<typeof openPostgresStore>) => {
  const store = await openPostgresStore(...args);
  opened.push(store);
  return store;
};
beforeAll(async () => {
  database = await createTestDatabase("postgres engine");
});
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});
afterAll(async () => {
  await database?.drop();
});

const versions = async (sql: TestDatabase["sql"]) =>
  ((await sql.unsafe("SELECT version FROM schema_migrations ORDER BY version")) as { version: number }[]).map(
    (row) => row.version,
  );

describe("migrations", () => {
  test("stores opened at once on a new database migrate it once, in order; a reopen applies none", async () => {
    const fresh = await createTestDatabase("migrations at once");
    try {
      // Four stores, each with a pool of its own: as four processes starting together.
      const stores = await Promise.all(Array.from({ length: 4 }, () => openPostgresStore(fresh.url)));
      for (const store of stores) await store.close();
      expect(await versions(fresh.sql)).toEqual(MIGRATIONS.map((m) => m.version));
      const applied = (await fresh.sql.unsafe("SELECT count(*)::int AS n FROM schema_migrations")) as {
        n: number;
      }[];
      expect(applied[0]?.n).toBe(MIGRATIONS.length);
      expect(await migrate(fresh.sql)).toBe(0);
    } finally {
      await fresh.drop();
    }
  });

  test("the dispatcher's port alone on a new database migrates it (no API has to start first)", async () => {
    const fresh = await createTestDatabase("dispatcher first");
    try {
      const port = await openDeliveryStore(storeLocationOf({ DATA_DIR: "unused", DATABASE_URL: fresh.url }));
      await port.close();
      expect(await versions(fresh.sql)).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      await fresh.drop();
    }
  });

  test("a failing migration leaves the database at the version before it, nothing of it applied", async () => {
    const store = await open(database.url);
    expect(await store.ping()).toBe(true);
    const failing = {
      version: 1000,
      name: "fails halfway",
      sql: "CREATE TABLE half_done (a int); SELECT 1/0;",
    };
    await expect(migrate(database.sql, [...MIGRATIONS, failing])).rejects.toThrow();
    expect((await versions(database.sql)).at(-1)).toBe(MIGRATIONS.at(-1)?.version);
    const [row] = (await database.sql.unsafe("SELECT to_regclass('half_done') AS t")) as {
      t: string | null;
    }[];
    expect(row?.t).toBeNull();
  });
});

describe("units of work", () => {
  /**
   * Two units running `step` at once, the first holding its transaction until the second is under
   * way: two writes of one row conflict (the second fails to serialize when the first commits).
   */
  async function race<T>(store: Store, step: (tx: StoreWriter, run: number) => Promise<T>) {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = store.unitOfWork(async (tx) => {
      const value = await step(tx, 1);
      await held;
      return value;
    });
    await Bun.sleep(50);
    const second = store.unitOfWork((tx) => step(tx, 2));
    await Bun.sleep(50);
    release();
    return Promise.allSettled([first, second]);
  }

  /** Both units write config variable `k` of one tenant, returning their run's number. */
  async function writeOneRow(store: Store) {
    const t = tenant(`race ${crypto.randomUUID()}`);
    await store.unitOfWork((tx) => tx.insertTenant(t));
    const variable = { tenantId: t.id, key: "k", configType: "plain-text" as const, description: null };
    return race(store, async (tx, run) => {
      await tx.putConfigVariable({ ...variable, value: `v${run}`, createdAt: run, updatedAt: run });
      return run;
    });
  }

  test("a unit that fails to serialize is run again: both units commit", async () => {
    const store = await open(database.url);
    expect(await writeOneRow(store)).toEqual([
      { status: "fulfilled", value: 1 },
      { status: "fulfilled", value: 2 },
    ]);
  });

  test("past the bound of runs, the unit rejects with UnavailableError, not the driver's error", async () => {
    const store = await open(database.url, { retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 } });
    const [first, second] = await writeOneRow(store);
    expect(first).toEqual({ status: "fulfilled", value: 1 });
    expect(second.status).toBe("rejected");
    expect((second as PromiseRejectedResult).reason).toBeInstanceOf(UnavailableError);
  });

  test("units taking a sequence's numbers at once never fail to serialize (a counter row would: one run each here)", async () => {
    const store = await open(database.url, { retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 } });
    const t = tenant("sequence race");
    await store.unitOfWork((tx) => tx.insertTenant(t));
    // The first use makes the sequence; the race is over one that exists, as every insert but a tenant's first.
    expect(await store.unitOfWork((tx) => tx.nextSequenceValue(t.id, "Jobs.Name"))).toBe(1);
    expect(await race(store, (tx) => tx.nextSequenceValue(t.id, "Jobs.Name"))).toEqual([
      { status: "fulfilled", value: 2 },
      { status: "fulfilled", value: 3 },
    ]);
  });

  test("two units creating the same table at once both succeed (the loser, run again, finds it)", async () => {
    const store = await open(database.url);
    const t = tenant("ddl race");
    await store.unitOfWork((tx) => tx.insertTenant(t));
    await Promise.all(
      [0, 1].map(() =>
        store.unitOfWork(async (tx) => {
          await tx.ensureObjectStorage(t.id, USERS);
          await Bun.sleep(30);
        }),
      ),
    );
    const ada = user(t.id, "ada");
    await store.unitOfWork((tx) =>
      tx.insertRecord(t.id, USERS, { ...newRecord(USERS, ada.id, {}), UID: ada.id }),
    );
  });

  test("text holding U+0000 outside records (a config variable) is refused as a ValidationError; nothing is written", async () => {
    const store = await open(database.url);
    const t = tenant("nul");
    await store.unitOfWork((tx) => tx.insertTenant(t));
    const variable = {
      tenantId: t.id,
      key: "k",
      configType: "plain-text" as const,
      value: "a\u0000b",
      description: null,
      createdAt: 1,
      updatedAt: 1,
    };
    const refused = await store.unitOfWork((tx) => tx.putConfigVariable(variable)).catch((error) => error);
    expect(refused).toBeInstanceOf(ValidationError);
    expect(await store.listConfigVariables(t.id)).toEqual([]);
  });

  test("a unit whose work caught a failed statement's error and went on rejects; nothing of it is written", async () => {
    // A failed statement aborts the transaction, and PostgreSQL answers its COMMIT with ROLLBACK.
    const store = await open(database.url);
    const taken = tenant("taken");
    await store.unitOfWork((tx) => tx.insertTenant(taken));
    const other = tenant("other");
    const run = store.unitOfWork(async (tx) => {
      await tx.insertTenant(other);
      const clash = await tx.insertTenant({ ...tenant("clash"), name: taken.name }).catch((error) => error);
      return String(clash);
    });
    expect(await run.catch((error) => String(error))).toContain(
      "did not commit (the server answered ROLLBACK)",
    );
    expect(await store.findTenantById(other.id)).toBeNull();
  });

  test("a unit's connection goes back to the pool clean after each end: committed, thrown, refused", async () => {
    const store = await open(database.url, { maxConnections: 1 });
    const t = tenant("one connection");
    await store.unitOfWork((tx) => tx.insertTenant(t));
    const thrown = tenant("thrown");
    await expect(
      store.unitOfWork(async (tx) => {
        await tx.insertTenant(thrown);
        throw new Error("work failed");
      }),
    ).rejects.toThrow("work failed");
    await expect(
      store.unitOfWork((tx) => tx.insertTenant({ ...tenant("again"), name: t.name })),
    ).rejects.toThrow();
    // The one connection, used by every unit above, holds no transaction: this unit commits alone.
    const after = tenant("after");
    await store.unitOfWork((tx) => tx.insertTenant(after));
    expect((await store.findTenantById(after.id))?.name).toBe(after.name);
    expect(await store.findTenantById(thrown.id)).toBeNull();
  });
});

describe("whole answers as JSON", () => {
  const FIRST_INSTANT = -62_167_219_200_000;
  const YEAR_ONE = -62_135_596_800_000;
  const LAST_INSTANT = 253_402_300_799_999;

  let store: Store;
  let tenantId: string;
  let events: ObjectDef;
  beforeAll(async () => {
    store = await openPostgresStore(database.url);
    const t = tenant("json");
    tenantId = t.id;
    events = customObject("Events", { At: { type: "datetime" }, Count: { type: "int" } });
    await store.unitOfWork(async (tx) => {
      await tx.insertTenant(t);
      await tx.ensureObjectStorage(t.id, USERS);
      await tx.createCustomObject(t.id, events);
    });
  });
  afterAll(async () => {
    await store?.close();
  });

  const field = (name: string) => events.fields.find((f) => f.name === name) as ObjectDef["fields"][number];
  /** `{ ...constants, event: { At, Count } }` of the record whose UID is slot 0. */
  const tree = (constants: number, nonNull = false): ReadNode => ({
    kind: "object",
    entries: [
      ...Array.from(
        { length: constants },
        (_, i) => [`k${i}`, { kind: "constant", value: `v${i}` }] as const,
      ),
      [
        "event",
        {
          kind: "record",
          object: events,
          uid: 0,
          node: {
            kind: "object",
            entries: [
              ["At", { kind: "value", field: field("At"), nonNull }],
              ["Count", { kind: "value", field: field("Count"), nonNull }],
            ],
          },
        },
      ],
    ],
  });
  const write = async (values: Record<string, number | null>) => {
    const record = newRecord(events, crypto.randomUUID(), values);
    const users = { ...newRecord(USERS, record.CreatedBy as string, {}), UID: record.CreatedBy as string };
    await store.unitOfWork(async (tx) => {
      await tx.insertRecord(tenantId, USERS, users);
      await tx.insertRecord(tenantId, events, record);
    });
    return record.UID as string;
  };
  const readJson = async (node: ReadNode, uid: string) =>
    (await (store.readJson as NonNullable<Store["readJson"]>)(tenantId, node, [uid])) as string;

  test("an object of more than 50 entries (100 function arguments) keeps every entry, in order", async () => {
    const uid = await write({ At: 0, Count: 1 });
    for (const constants of [0, 49, 50, 51, 120, 260]) {
      const text = await readJson(tree(constants), uid);
      const expected = {
        ...Object.fromEntries(Array.from({ length: constants }, (_, i) => [`k${i}`, `v${i}`])),
        event: { At: "1970-01-01T00:00:00.000Z", Count: 1 },
      };
      expect(JSON.stringify(JSON.parse(text))).toBe(JSON.stringify(expected));
    }
  });

  test("instants print as toISOString does, the year 0 and both ends of the range included", async () => {
    const instants = [
      FIRST_INSTANT,
      FIRST_INSTANT + 59 * 86_400_000 + 1,
      YEAR_ONE - 1,
      YEAR_ONE,
      -1,
      0,
      1_714_564_800_123,
      LAST_INSTANT,
    ];
    for (const at of instants) {
      const uid = await write({ At: at, Count: null });
      const answer = JSON.parse(await readJson(tree(0), uid)) as { event: { At: string } };
      expect({ at, printed: answer.event.At }).toEqual({ at, printed: new Date(at).toISOString() });
    }
  });

  test("a value the resolvers would refuse fails the statement: instants past the range, Ints past 32 bits, a null promised not null", async () => {
    const cases: [Record<string, number | null>, boolean][] = [
      [{ At: FIRST_INSTANT - 1, Count: 1 }, false],
      [{ At: LAST_INSTANT + 1, Count: 1 }, false],
      [{ At: 0, Count: 2 ** 31 }, false],
      [{ At: 0, Count: null }, true],
    ];
    for (const [values, nonNull] of cases) {
      const uid = await write(values);
      await expect(readJson(tree(0, nonNull), uid)).rejects.toThrow();
    }
    const fine = await write({ At: 0, Count: -(2 ** 31) });
    expect(JSON.parse(await readJson(tree(0, true), fine))).toEqual({
      event: { At: "1970-01-01T00:00:00.000Z", Count: -(2 ** 31) },
    });
  });
});
