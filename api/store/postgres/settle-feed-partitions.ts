/**
 * How many partitions a PostgreSQL store's change log has (P), settled once:
 * the first process that opens the store for the API (the API or the admin
 * tool; the dispatcher never writes the log) makes the partitions' lock rows
 * (`feed_locks`, 0 … P−1), and from then on their count is the store's P for
 * every process. A store made by the first migrations has 16. P cannot
 * change afterwards: entries already in the log sit in the partitions their
 * tenants had, and saved positions are per partition, so a process asking
 * for another P is refused at start.
 */
import type { SQL } from "bun";
import { ConfigError } from "../../../common/errors.ts";
import { DEFAULT_FEED_PARTITIONS } from "../feed-partitions.ts";

/**
 * The store's P: `wanted` (default DEFAULT_FEED_PARTITIONS) for a store that has none yet, else the
 * one it has. Serialized with the migrations by their lock row, so processes starting together on
 * a new store settle one P.
 * @throws ConfigError (one line naming FEED_PARTITIONS and both values) when `wanted` is given and
 * differs from the store's.
 */
export async function settleFeedPartitions(sql: SQL, wanted: number | undefined): Promise<number> {
  return sql.begin("isolation level read committed", async (tx) => {
    await tx.unsafe("SELECT id FROM schema_migration_lock WHERE id = 1 FOR UPDATE");
    const [row] = (await tx.unsafe(
      "SELECT count(*)::int AS n, coalesce(max(partition), -1)::int AS top FROM feed_locks",
    )) as { n: number; top: number }[];
    const { n = 0, top = -1 } = row ?? {};
    if (n === 0) {
      const partitions = wanted ?? DEFAULT_FEED_PARTITIONS;
      await tx.unsafe("INSERT INTO feed_locks SELECT generate_series(0, $1::int - 1)", [partitions]);
      return partitions;
    }
    if (top !== n - 1) throw new Error(`feed_locks holds ${n} rows, not partitions 0 to ${n - 1}`);
    if (wanted !== undefined && wanted !== n)
      throw new ConfigError([
        `FEED_PARTITIONS: this store's change feed was created with ${n} partitions, FEED_PARTITIONS=${wanted} cannot change that; set it to ${n} or unset it`,
      ]);
    return n;
  });
}
