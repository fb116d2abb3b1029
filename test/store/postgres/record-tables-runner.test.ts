// @test-engines postgres: it tests the PostgreSQL engine itself, on the run's private cluster
/**
 * A table or column gone under a statement on a tenant's record tables is a catalogue change that
 * committed meanwhile (CatalogueChangedError, `conflict`); on any other table it is a defect of
 * the service's own and stays the server's error (answered as internal).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { recordTablesRunner } from "../../../api/store/postgres/record-tables-runner.ts";
import { CatalogueChangedError } from "../../../common/errors.ts";
import { createRunner } from "../../../common/store/postgres/runner.ts";
import { createTestDatabase, type TestDatabase } from "../../support/private-postgres.ts";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase("record tables runner");
  await database.sql.unsafe("CREATE TABLE kept (a int)");
});
afterAll(() => database?.drop());

test("a missing table or column is CatalogueChangedError through the record tables' runner, the server's error elsewhere", async () => {
  const base = createRunner(database.sql);
  const records = recordTablesRunner(base);
  for (const text of ["SELECT * FROM gone", "SELECT missing FROM kept"]) {
    const told = await records.rows(text).catch((error: unknown) => error);
    expect(told).toBeInstanceOf(CatalogueChangedError);
    expect((told as CatalogueChangedError).code).toBe("conflict");
    const raw = await base.rows(text).catch((error: unknown) => error);
    expect(raw).not.toBeInstanceOf(CatalogueChangedError);
    expect((raw as { errno?: string }).errno).toMatch(/^42(P01|703)$/);
  }
  // Everything else passes through as it was.
  expect(await records.rows<{ a: number }>("SELECT 1 AS a")).toEqual([{ a: 1 }]);
  const syntax = await records.run("SELEC 1").catch((error: unknown) => error);
  expect(syntax).not.toBeInstanceOf(CatalogueChangedError);
});
