/**
 * A private PostgreSQL cluster for the peers (scripts/private-postgres.ts:
 * Debian's binaries, run as the `postgres` user, on a free loopback port), data
 * under `bench/.work/`, pinned to the server core. Every setting that differs
 * from PostgreSQL's defaults is in `POSTGRES_SETTINGS` (memory sized for this
 * 24 GiB machine).
 */
import { SQL } from "bun";
import {
  type PrivatePostgres as ClusterHandle,
  startPrivatePostgres as startCluster,
} from "../../scripts/private-postgres.ts";

/**
 * `synchronous_commit = off` matches our store's durability (SQLite WAL with
 * `synchronous = NORMAL`: a commit does not wait for its flush); fsync stays on.
 */
export const POSTGRES_SETTINGS = {
  shared_buffers: "512MB",
  effective_cache_size: "4GB",
  work_mem: "16MB",
  synchronous_commit: "off",
  max_connections: "100",
};

export interface PrivatePostgres extends ClusterHandle {
  /** A client for loading; closed by the caller. */
  client(database: string): SQL;
}

/** A private cluster (scripts/private-postgres.ts) in `dir`, with `POSTGRES_SETTINGS`, pinned to `core`. */
export async function startPrivatePostgres(dir: string, core: number): Promise<PrivatePostgres> {
  const cluster = await startCluster({ dir, core, settings: POSTGRES_SETTINGS });
  return { ...cluster, client: (database) => new SQL({ url: cluster.url(database), max: 4 }) };
}

/** Inserts `rows` (objects keyed by column) into `table` in multi-row INSERTs of at most 65,535 parameters. */
export async function bulkInsert(sql: SQL, table: string, rows: Record<string, unknown>[]): Promise<void> {
  const columns = Object.keys(rows[0] ?? {}).length || 1;
  const chunk = Math.floor(60_000 / columns);
  for (let from = 0; from < rows.length; from += chunk) {
    await sql`INSERT INTO ${sql(table)} ${sql(rows.slice(from, from + chunk))}`;
  }
}
