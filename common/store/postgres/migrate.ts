/**
 * Applies the migrations a database lacks, safely when several processes
 * start at once: each takes the one row of `schema_migration_lock` FOR UPDATE
 * in its migration transaction, so they migrate one after the other and the
 * later ones find the work done. A row lock, not an advisory lock: advisory
 * locks do not carry over to the distributed PostgreSQL-wire services the
 * engine means to stay portable to (docs: STORAGE.md).
 */
import type { SQL } from "bun";
import { MIGRATIONS, type Migration } from "./migrations.ts";
import { isRetryable } from "./pg-errors.ts";

const BOOTSTRAP = `
  CREATE TABLE IF NOT EXISTS schema_migrations (
    version int PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL);
  CREATE TABLE IF NOT EXISTS schema_migration_lock (id int PRIMARY KEY);
  INSERT INTO schema_migration_lock (id) VALUES (1) ON CONFLICT DO NOTHING;
`;
/** Two processes creating the bookkeeping tables at once: the loser's CREATE fails in the catalogue, once. */
const BOOTSTRAP_TRIES = 5;

async function bootstrap(sql: SQL): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await sql.unsafe(BOOTSTRAP).simple();
      return;
    } catch (error) {
      if (attempt >= BOOTSTRAP_TRIES || !isRetryable(error)) throw error;
    }
  }
}

/**
 * Brings the database up to the newest migration; resolves to how many this call applied. The
 * pending migrations apply in one transaction: one that fails leaves the database as it was.
 */
export async function migrate(sql: SQL, migrations: readonly Migration[] = MIGRATIONS): Promise<number> {
  await bootstrap(sql);
  // Read committed: once the lock is ours, the next statement sees what the holder before us committed.
  return sql.begin("isolation level read committed", async (tx) => {
    // Free of the pool's statement_timeout (postgres-engine.ts): waiting for another process's
    // migrations, or a migration rewriting a big table, may rightly take longer than any request.
    await tx.unsafe("SET LOCAL statement_timeout = 0");
    await tx.unsafe("SELECT id FROM schema_migration_lock WHERE id = 1 FOR UPDATE");
    const [row] = (await tx.unsafe("SELECT coalesce(max(version), 0) AS v FROM schema_migrations")) as {
      v: number;
    }[];
    let applied = 0;
    for (const migration of migrations) {
      if (migration.version <= (row?.v ?? 0)) continue;
      await tx.unsafe(migration.sql).simple();
      await tx.unsafe("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
        migration.version,
        migration.name,
        Date.now(),
      ]);
      applied++;
    }
    return applied;
  });
}
