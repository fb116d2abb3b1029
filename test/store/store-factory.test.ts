/**
 * The store factory: the engine is chosen from configuration in one place
 * (common/store/store-location.ts, common/store/open-engine.ts), and every
 * process opens its store through it: the API and the admin tool (services),
 * the dispatcher, the conformance suite.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadApiConfig } from "../../api/config.ts";
import { openCoreServices } from "../../api/services.ts";
import { openStore } from "../../api/store/open-store.ts";
import { openDeliveryStore } from "../../common/delivery-log/open-delivery-store.ts";
import { ConfigError } from "../../common/errors.ts";
import { createLogger } from "../../common/log.ts";
import { MIGRATIONS } from "../../common/store/sqlite/migrations.ts";
import {
  MONGODB_EXPERIMENTAL_REFUSAL,
  type StoreLocation,
  storeLocationOf,
} from "../../common/store/store-location.ts";
import { loadDispatcherConfig } from "../../dispatcher/config.ts";
import { openDispatcher } from "../../dispatcher/open-dispatcher.ts";
import { freePort as closedPort } from "../../scripts/private-redis.ts";
import { createTestDatabase } from "../support/private-postgres.ts";
import { openTestRedis } from "../support/redis.ts";

const POSTGRES_URL = "postgres://tds:secret@db.example:5432/tds";
const MONGODB_URL = "mongodb://db.example:27017/tds?replicaSet=rs0";

const dirs: string[] = [];
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "tds-factory-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("the engine chosen from configuration", () => {
  test.each([
    [{ DATA_DIR: "/srv/data" }, { engine: "sqlite", path: "/srv/data/store.sqlite" }],
    [
      { DATA_DIR: "data", DATABASE_URL: POSTGRES_URL },
      { engine: "postgres", url: POSTGRES_URL },
    ],
    [
      { DATA_DIR: "data", DATABASE_URL: POSTGRES_URL, DATABASE_POOL_SIZE: 3 },
      { engine: "postgres", url: POSTGRES_URL, poolSize: 3 },
    ],
    [
      { DATA_DIR: "data", MONGODB_URL, STORE_EXPERIMENTAL: "mongodb" },
      { engine: "mongodb", url: MONGODB_URL },
    ],
  ] as const)("%o → %o", (settings, location) => {
    expect(storeLocationOf(settings)).toEqual(location as StoreLocation);
  });

  test("both engine URLs at once are refused: the choice would be a guess", () => {
    expect(() => storeLocationOf({ DATA_DIR: "data", DATABASE_URL: POSTGRES_URL, MONGODB_URL })).toThrow(
      "DATABASE_URL, MONGODB_URL: each chooses a store engine; set one of them, not both",
    );
  });

  test("MONGODB_URL alone is refused in one line: the engine is experimental, STORE_EXPERIMENTAL=mongodb opts in", () => {
    const refused = (() => {
      try {
        return storeLocationOf({ DATA_DIR: "data", MONGODB_URL });
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).problems).toEqual([MONGODB_EXPERIMENTAL_REFUSAL]);
    expect(MONGODB_EXPERIMENTAL_REFUSAL).toContain("experimental and untested against a real server");
    expect(MONGODB_EXPERIMENTAL_REFUSAL).toContain("STORE_EXPERIMENTAL=mongodb");
    expect(MONGODB_EXPERIMENTAL_REFUSAL).toContain('README, "Store engines"');
  });

  test("both processes read the engine URLs, and check their form", () => {
    const env = { REDIS_URL: "redis://127.0.0.1:1", DATA_DIR: "data", DATABASE_URL: POSTGRES_URL };
    expect(loadApiConfig(env).DATABASE_URL).toBe(POSTGRES_URL);
    expect(loadDispatcherConfig(env).DATABASE_URL).toBe(POSTGRES_URL);
    expect(loadDispatcherConfig({ ...env, DATABASE_URL: undefined, MONGODB_URL }).MONGODB_URL).toBe(
      MONGODB_URL,
    );
    for (const load of [loadApiConfig, loadDispatcherConfig]) {
      expect(() => load({ ...env, DATABASE_URL: "mysql://db/tds" })).toThrow(
        "DATABASE_URL: must be a postgres:// or postgresql:// URL",
      );
      expect(() => load({ ...env, DATABASE_URL: undefined, MONGODB_URL: "db.example" })).toThrow(
        "MONGODB_URL: must be a mongodb:// or mongodb+srv:// URL",
      );
      expect(load(env).DATABASE_POOL_SIZE).toBe(10);
      expect(load({ ...env, DATABASE_POOL_SIZE: "4" }).DATABASE_POOL_SIZE).toBe(4);
      for (const size of ["0", "1001", "2.5", "many"])
        expect(() => load({ ...env, DATABASE_POOL_SIZE: size })).toThrow("DATABASE_POOL_SIZE");
      // The opt-in names an engine, validated once with the rest.
      expect(load({ ...env, STORE_EXPERIMENTAL: "mongodb" }).STORE_EXPERIMENTAL).toBe("mongodb");
      expect(load({ ...env, STORE_EXPERIMENTAL: "" }).STORE_EXPERIMENTAL).toBeUndefined();
      expect(() => load({ ...env, STORE_EXPERIMENTAL: "postgres" })).toThrow(
        "STORE_EXPERIMENTAL: must be mongodb (the one experimental engine)",
      );
    }
  });
});

describe("MONGODB_URL without the opt-in is refused by every process, with one line, creating nothing", () => {
  test("the API (and the admin tool) and the dispatcher", async () => {
    const redis = openTestRedis();
    try {
      const env = { DATA_DIR: freshDir(), REDIS_URL: redis.url, REDIS_PREFIX: redis.prefix, MONGODB_URL };
      const log = createLogger("silent");
      const api = openCoreServices(loadApiConfig(env));
      await expect(api).rejects.toThrow(MONGODB_EXPERIMENTAL_REFUSAL);
      // Before, the dispatcher read neither URL and opened DATA_DIR/store.sqlite: another store than the API's.
      const dispatcher = openDispatcher(loadDispatcherConfig(env), { redis: redis.redis, log });
      await expect(dispatcher).rejects.toThrow(MONGODB_EXPERIMENTAL_REFUSAL);
      expect(readdirSync(env.DATA_DIR)).toEqual([]);
    } finally {
      await redis.close();
    }
  });
});

describe("the MongoDB engine, opted in, with no server at the URL", () => {
  // A loopback port nothing listens on, and a short server selection: the refusal comes in well under a second.
  const unreachable = `mongodb://tds:secret@127.0.0.1:${closedPort()}/tds?serverSelectionTimeoutMS=300`;

  test("the store and the dispatcher's port refuse in one line naming MONGODB_URL (password hidden), within 5 s", async () => {
    const location = storeLocationOf({
      DATA_DIR: freshDir(),
      MONGODB_URL: unreachable,
      STORE_EXPERIMENTAL: "mongodb",
    });
    for (const open of [openStore, openDeliveryStore]) {
      const started = performance.now();
      const refused = await open(location).catch((error: unknown) => error);
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(refused).toBeInstanceOf(ConfigError);
      const { problems } = refused as ConfigError;
      expect(problems).toHaveLength(1);
      expect(problems[0]).toStartWith("MONGODB_URL: cannot use mongodb://tds@127.0.0.1:");
      expect(problems[0]).not.toContain("secret");
    }
  });
});

describe("the PostgreSQL engine", () => {
  test("DATABASE_URL opens it for the API's store and the dispatcher's port: one database, both see it", async () => {
    const database = await createTestDatabase("factory");
    try {
      const location = storeLocationOf({ DATA_DIR: freshDir(), DATABASE_URL: database.url });
      const apiSide = await openStore(location);
      const dispatcherSide = await openDeliveryStore(location);
      expect(apiSide.engine).toBe("postgres");
      expect(await apiSide.listTenants()).toEqual([]);
      expect(await dispatcherSide.loadDelivery("no-tenant", "no-delivery", "no-webhook")).not.toBeUndefined();
      await dispatcherSide.close();
      await apiSide.close();
    } finally {
      await database.drop();
    }
  });

  test("DATABASE_POOL_SIZE bounds the units of work a process runs at once: each holds a connection of the pool", async () => {
    const database = await createTestDatabase("factory-pool");
    try {
      const atMostRunning = async (poolSize: number | undefined) => {
        const store = await openStore(
          storeLocationOf({ DATA_DIR: freshDir(), DATABASE_URL: database.url, DATABASE_POOL_SIZE: poolSize }),
        );
        let running = 0;
        let most = 0;
        await Promise.all(
          Array.from({ length: 12 }, () =>
            store.unitOfWork(async () => {
              most = Math.max(most, ++running);
              await Bun.sleep(40);
              running--;
            }),
          ),
        );
        await store.close();
        return most;
      };
      expect(await atMostRunning(2)).toBe(2);
      // The engine's default, 10, when the setting is absent (the configuration's default is the same).
      expect(await atMostRunning(undefined)).toBe(10);
    } finally {
      await database.drop();
    }
  });
});

describe("the SQLite engine", () => {
  test("the API and the dispatcher open the same file; the first to open it migrates it", async () => {
    const location = storeLocationOf({ DATA_DIR: freshDir() });
    const dispatcherSide = await openDeliveryStore(location);
    if (location.engine !== "sqlite") throw new Error("not sqlite");
    expect(existsSync(location.path)).toBe(true);
    const apiSide = await openStore(location);
    expect(await apiSide.listTenants()).toEqual([]);
    await dispatcherSide.close();
    await apiSide.close();
  });

  test("one change-feed partition: FEED_PARTITIONS 1 or unset opens it, any other is refused in one line", async () => {
    const location = storeLocationOf({ DATA_DIR: freshDir() });
    for (const feedPartitions of [undefined, 1]) {
      const store = await openStore(location, { feedPartitions });
      expect(store.feedPartitions()).toBe(1);
      await store.close();
    }
    const refused = await openStore(location, { feedPartitions: 4 }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).problems).toEqual([
      "FEED_PARTITIONS: the embedded SQLite store keeps one change-feed partition (one machine), not 4; unset it or set 1",
    ]);
  });

  test("processes opening a new store file at the same moment each find it migrated once", async () => {
    const dir = freshDir();
    const path = join(dir, "store.sqlite");
    const engine = join(import.meta.dir, "../../common/store/sqlite/sqlite-engine.ts");
    // Each process loads the module, then waits for the same moment to open the file: they race.
    const startAt = Date.now() + 500;
    const opener = `
      const { openSqliteEngine } = await import(${JSON.stringify(engine)});
      await Bun.sleep(${startAt} - Date.now());
      const db = openSqliteEngine(${JSON.stringify(path)}).connection;
      console.log(db.query("SELECT count(*) AS n FROM schema_migrations").get().n);
      db.close();`;
    const procs = Array.from({ length: 6 }, () =>
      Bun.spawn([process.execPath, "-e", opener], { stdout: "pipe", stderr: "pipe" }),
    );
    const outcomes = await Promise.all(
      procs.map(async (proc) => ({
        code: await proc.exited,
        out: (await new Response(proc.stdout).text()).trim(),
        err: await new Response(proc.stderr).text(),
      })),
    );
    expect(outcomes).toEqual(procs.map(() => ({ code: 0, out: String(MIGRATIONS.length), err: "" })));
  });
});
