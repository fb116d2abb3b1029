/**
 * `copy-store`'s refusals and failures: a non-empty target (one line on the command line, nothing
 * written), a target holding one of the source's tenants, a record the target engine cannot hold
 * halfway through (the whole copy undone), a source written to during the copy (undone), bad
 * arguments; and the source read a page at a time, never a table at once.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { copyStore } from "../../api/admin/copy-store.ts";
import { runCopyStoreCommand } from "../../api/admin/copy-store-command.ts";
import { openStore } from "../../api/store/open-store.ts";
import type { Store } from "../../api/store/store.ts";
import { ConflictError, ValidationError } from "../../common/errors.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { graphqlClient } from "../support/graphql.ts";
import { createTestDatabase } from "../support/private-postgres.ts";
import { makeTempDir } from "../support/temp-dirs.ts";

const ROOT = join(import.meta.dir, "../..");
let source: TestApp;
let sourceDir: string;
const REGIONS = 5;

/** A SQLite store of its own with one tenant named `name`, through the app; a GraphQL client of its administrator. */
async function sqliteStoreWith(name: string) {
  const dir = makeTempDir("tds-copy-");
  const app = await createTestApp({ DATA_DIR: dir });
  const tenant = await app.provision(name);
  return { app, dir, gql: graphqlClient(app, tenant.adminToken) };
}

const openSqlite = (dir: string) => openStore({ engine: "sqlite", path: join(dir, "store.sqlite") });

beforeAll(async () => {
  const made = await sqliteStoreWith("acme");
  ({ app: source, dir: sourceDir } = made);
  const inserts = Array.from(
    { length: REGIONS },
    (_, i) => `r${i}: insertRegions(input: {Name: "R${i}", Timezone: "UTC"})`,
  );
  expect((await made.gql(`mutation { schema { ${inserts.join("\n")} } }`)).errors).toBeUndefined();
});
afterAll(() => source.close());

describe("copy-store refuses", () => {
  test("a non-empty target, in one line on the command line, writing nothing", async () => {
    const { app: other, dir } = await sqliteStoreWith("initech");
    try {
      await expect(runCopyStoreCommand(["--from", sourceDir, "--to", dir])).rejects.toThrow(
        "the target store is not empty (1 tenant: initech); copy into an empty store, or pass --into-non-empty to add the source's tenants beside them",
      );
      const cli = Bun.spawn(
        [process.execPath, "api/admin/cli.ts", "copy-store", "--from", sourceDir, "--to", dir],
        {
          cwd: ROOT,
          env: { PATH: process.env.PATH, HOME: process.env.HOME },
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      const [out, err, code] = await Promise.all([
        new Response(cli.stdout).text(),
        new Response(cli.stderr).text(),
        cli.exited,
      ]);
      expect({ code, out }).toEqual({ code: 2, out: "" });
      expect(err.trimEnd().split("\n")).toEqual([
        "admin: the target store is not empty (1 tenant: initech); copy into an empty store, or pass --into-non-empty to add the source's tenants beside them",
      ]);
      expect((await other.store.listTenants()).map((t) => t.name)).toEqual(["initech"]);

      // Told to, it adds the source's tenants beside the target's own.
      const lines = await runCopyStoreCommand(["--from", sourceDir, "--to", dir, "--into-non-empty"]);
      expect(lines).toContainEqual(expect.stringMatching(/^tenants +1$/));
      other.store.refreshReads();
      expect((await other.store.listTenants()).map((t) => t.name).toSorted()).toEqual(["acme", "initech"]);
      // Not twice: the target holds the source's tenant now.
      await expect(
        runCopyStoreCommand(["--from", sourceDir, "--to", dir, "--into-non-empty"]),
      ).rejects.toThrow("the target store holds tenants of the source already: acme");
    } finally {
      await other.close();
    }
  });

  test("a record the target cannot hold: the copy is undone whole, the target left empty", async () => {
    const { app: holder, dir, gql } = await sqliteStoreWith("nul");
    const database = await createTestDatabase("copy-store-nul");
    try {
      const inserted = await gql(
        `mutation ($name: String!) { schema { insertRegions(input: {Name: $name, Timezone: "UTC"}) } }`,
        { name: "NUL \u0000 inside" },
      );
      expect(inserted.errors).toBeUndefined();
      const failed = runCopyStoreCommand(["--from", dir, "--to", database.url]);
      await expect(failed).rejects.toBeInstanceOf(ValidationError);
      await expect(failed).rejects.toThrow(
        /^tenant nul, Regions: Regions: text cannot hold the NUL character/,
      );
      // The tenant, its users and storage were written before the record: all undone.
      const target = await openStore({ engine: "postgres", url: database.url });
      try {
        expect(await target.listTenants()).toEqual([]);
      } finally {
        await target.close();
      }
    } finally {
      await holder.close();
      await database.drop();
    }
  }, 30_000);

  test("a source written to during the copy: undone, with what to do", async () => {
    const dir = makeTempDir("tds-copy-target-");
    const target = await openSqlite(dir);
    const reading = await openSqlite(sourceDir);
    const gql = graphqlClient(source, (await source.provision("umbrella")).adminToken);
    let written = false;
    // Instrumentation, not a mock: the real source, which commits a change the first time it is listed.
    const busy: Store = {
      ...reading,
      async listRecords(...args) {
        if (!written) {
          written = true;
          const answer = await gql(
            `mutation { schema { insertRegions(input: {Name: "Late", Timezone: "UTC"}) } }`,
          );
          expect(answer.errors).toBeUndefined();
        }
        return reading.listRecords(...args);
      },
    };
    try {
      const copying = copyStore(busy, target);
      await expect(copying).rejects.toBeInstanceOf(ConflictError);
      await expect(copying).rejects.toThrow(
        "the source store changed during the copy (1 change committed meanwhile): stop every API process and dispatcher on it, then run copy-store again; nothing was written to the target",
      );
      expect(await target.listTenants()).toEqual([]);
    } finally {
      await target.close();
      await reading.close();
    }
  });

  test("bad arguments, each with its reason", async () => {
    await expect(runCopyStoreCommand(["--from", sourceDir])).rejects.toThrow(/needs --from and --to/);
    await expect(runCopyStoreCommand(["--from", "mysql://db/x", "--to", sourceDir])).rejects.toThrow(
      /mysql:\/\/ names no store engine/,
    );
    await expect(
      runCopyStoreCommand(["--from", join(sourceDir, "nope.sqlite"), "--to", "x"]),
    ).rejects.toThrow(/--from: no SQLite store at/);
    await expect(runCopyStoreCommand(["--from", sourceDir, "--to", "x", "--page-size", "0"])).rejects.toThrow(
      /--page-size/,
    );
    // MongoDB: never the target (the copy is one transaction, which the server bounds); the source only when opted in.
    const mongodb = "mongodb://127.0.0.1:9/tds?replicaSet=rs0";
    await expect(
      runCopyStoreCommand(["--from", sourceDir, "--to", mongodb], undefined, {
        STORE_EXPERIMENTAL: "mongodb",
      }),
    ).rejects.toThrow(/--to: a copy cannot go into the MongoDB engine: it is one transaction/);
    await expect(runCopyStoreCommand(["--from", mongodb, "--to", "x"], undefined, {})).rejects.toThrow(
      /--from: MONGODB_URL: the MongoDB engine is experimental .* set STORE_EXPERIMENTAL=mongodb/,
    );
  });
});

describe("copy-store brings the source's storage up to date first, as an API start does", () => {
  test("a standard field's column the source lacks (a store of an older version) is added, and the copy goes through", async () => {
    const { app, dir, gql } = await sqliteStoreWith("old");
    const target = makeTempDir("tds-copy-target-");
    let closed = false;
    try {
      expect(
        (await gql(`mutation { schema { insertRegions(input: {Name: "N", Timezone: "UTC"}) } }`)).errors,
      ).toBeUndefined();
      await app.close();
      closed = true;
      // As a version before Regions had Timezone's column would have left it.
      const db = new Database(join(dir, "store.sqlite"));
      const table = db
        .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE name LIKE 't%_regions'")
        .get();
      db.run(`ALTER TABLE "${table?.name}" DROP COLUMN "timezone"`);
      db.close();
      const lines = await runCopyStoreCommand(["--from", dir, "--to", target]);
      expect(lines).toContainEqual(expect.stringMatching(/^records +\d+ \(.*Regions 1/));
    } finally {
      if (!closed) await app.close();
    }
  });
});

describe("copy-store reads the source a page at a time", () => {
  test("every read of records, users, tokens and deliveries asks for at most a page", async () => {
    const dir = makeTempDir("tds-copy-target-");
    const target = await openSqlite(dir);
    const reading = await openSqlite(sourceDir);
    const limits: number[] = [];
    let listed = 0;
    const counted: Store = {
      ...reading,
      async listRecords(tenantId, object, query) {
        limits.push(query.limit);
        const page = await reading.listRecords(tenantId, object, query);
        listed += page.length;
        return page;
      },
      exportUsers(tenantId, after, limit) {
        limits.push(limit);
        return reading.exportUsers(tenantId, after, limit);
      },
      exportTokens(tenantId, after, limit) {
        limits.push(limit);
        return reading.exportTokens(tenantId, after, limit);
      },
      exportDeliveries(tenantId, after, limit) {
        limits.push(limit);
        return reading.exportDeliveries(tenantId, after, limit);
      },
      readChanges(partition, after, limit) {
        limits.push(limit);
        return reading.readChanges(partition, after, limit);
      },
    };
    try {
      const counts = await copyStore(counted, target, { pageSize: 2 });
      expect(counts.recordsByObject.Regions).toBeGreaterThanOrEqual(REGIONS);
      expect(listed).toBe(counts.records);
      expect(Math.max(...limits)).toBe(2);
      // Regions alone took three pages of at most two.
      expect(limits.length).toBeGreaterThan(counts.records / 2);
    } finally {
      await target.close();
      await reading.close();
    }
  });
});
