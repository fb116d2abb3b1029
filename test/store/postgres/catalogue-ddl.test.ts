// @test-engines postgres: it tests the PostgreSQL engine itself, on the run's private cluster
/**
 * Adding a field with a default to a table of records writes none of them: PostgreSQL keeps a
 * constant DEFAULT in its catalog for the rows stored without the column. The DEFAULT is gone
 * after, so the column holds NULL unless written, as in a table created whole.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { addColumn, ensureObjectTable } from "../../../api/store/postgres/catalogue-ddl.ts";
import { tableRef } from "../../../api/store/postgres/tenant-schemas.ts";
import { createRunner } from "../../../common/store/postgres/runner.ts";
import { createTestDatabase, type TestDatabase } from "../../support/private-postgres.ts";
import { customField, customObject } from "../conformance/fixtures.ts";

const SCHEMA = "ddl_test";
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase("catalogue ddl");
});
afterAll(async () => {
  await database?.drop();
});

test("a column added with a default rewrites no row; every row reads it, and the column keeps no DEFAULT", async () => {
  const db = createRunner(database.sql);
  const object = customObject("Shelves", { Label: { type: "string" } });
  const table = tableRef(SCHEMA, object);
  await db.run(`CREATE SCHEMA ${SCHEMA}`);
  await ensureObjectTable(db, SCHEMA, object);
  await db.run(`INSERT INTO ${table} (uid) SELECT gen_random_uuid()::text FROM generate_series(1, 100)`);
  // A row's xmin names the transaction that wrote that version of it: an UPDATE would change every one.
  const versions = () =>
    db.rows<{ uid: string; xmin: string }>(`SELECT uid, xmin::text FROM ${table} ORDER BY uid`);
  const before = await versions();
  const tags = customField("Shelves", "Tags", {
    type: "multipicklist",
    items: ["red", "blue"],
    defaultValue: "red;blue",
  });

  await addColumn(db, SCHEMA, object, tags);

  expect(await versions()).toEqual(before);
  const [read] = await db.rows<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} WHERE __tags = ARRAY['red', 'blue']::text[]`,
  );
  expect(read?.n).toBe(100);
  const [column] = await db.rows<{ fallback: string | null }>(
    `SELECT column_default AS fallback FROM information_schema.columns
     WHERE table_schema = $1 AND table_name = $2 AND column_name = '__tags'`,
    [SCHEMA, object.mapping],
  );
  expect(column).toEqual({ fallback: null });
});
