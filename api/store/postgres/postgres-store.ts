/**
 * The PostgreSQL store engine, over Bun's built-in SQL client (a pool of
 * connections; no ORM), built on the engine common/store/postgres/ opened
 * (its server checked, its database migrated). Reads
 * outside a unit of work run on the pool, each statement on a snapshot of
 * every commit finished before it, so requests need no snapshot management.
 * A unit of work is one SERIALIZABLE transaction; one that fails to
 * serialize (40001, a deadlock 40P01, or two units racing to create the same
 * table) is run again, a bounded number of times (unit-of-work-retry.ts), as
 * the port allows. Its change-log entries are written at its end, in commit
 * order (change-log-session.ts).
 */
import type { SQL } from "bun";
import { UnavailableError } from "../../../common/errors.ts";
import { isRetryable } from "../../../common/store/postgres/pg-errors.ts";
import { openPostgresEngine, type PostgresEngine } from "../../../common/store/postgres/postgres-engine.ts";
import { createRunner, type FailureWatch, type Runner } from "../../../common/store/postgres/runner.ts";
import type { ChangeEntry } from "../../model/record-values.ts";
import type { Store, StoreWriter } from "../store.ts";
import { CHANGES_CHANNEL } from "./change-log-session.ts";
import { createPostgresSession } from "./postgres-session.ts";
import { settleFeedPartitions } from "./settle-feed-partitions.ts";
import { createTableGrowth } from "./table-growth.ts";
import { createTenantSchemas } from "./tenant-schemas.ts";
import { createTenantShare, type TenantShare } from "./tenant-share.ts";
import { DEFAULT_RETRY, type RetryPolicy, retryDelayMs } from "./unit-of-work-retry.ts";

export interface PostgresStoreOptions {
  /** Connections in the pool (default DEFAULT_POOL_SIZE, store-location.ts): units of work under way at once, reads included. */
  maxConnections?: number;
  /** The statement time limit of the pool's connections, ms (default 0: none; postgres-engine.ts). */
  statementTimeoutMs?: number;
  /** How units of work that fail to serialize are run again (default: DEFAULT_RETRY). */
  retry?: RetryPolicy;
  /**
   * How long a unit of work waits for a row lock before it fails and is run again, ms (default
   * 200; 55P03 is retryable): units that lock the same rows in opposite orders (upserts of
   * overlapping keys in different orders) would otherwise wait for the server's deadlock check, a
   * second each by default. Tests that stall a unit on purpose raise it.
   */
  lockTimeoutMs?: number;
  /**
   * The change log's partitions a new store gets (default 16); for a store that has them already,
   * the count it must have (settle-feed-partitions.ts). Unset: whatever the store has.
   */
  feedPartitions?: number;
  /** Rows this process writes into a table before it first runs ANALYZE on it (default 1,000; table-growth.ts). */
  analyzeAfterRows?: number;
  /**
   * Record reads of one tenant under way at once on this process (tenant-share.ts; default
   * ⌈pool ÷ 2⌉, so one tenant's slow reads leave the other half of the pool to the rest).
   */
  tenantShare?: number;
}

/** Most record reads of one tenant waiting for its share at once, per process (bounds their memory). */
const MAX_WAITING_PER_TENANT = 1000;

type StoreBuildOptions = Pick<
  PostgresStoreOptions,
  "retry" | "feedPartitions" | "lockTimeoutMs" | "analyzeAfterRows" | "tenantShare"
>;

/**
 * Opens the engine on the database `url` names (`postgres://…`) and the store on it.
 * @throws ConfigError when the server cannot be used (common/store/postgres/postgres-engine.ts), or
 * the store's partitions are not `options.feedPartitions`.
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<Store> {
  return postgresStoreOn(await openPostgresEngine(url, options), options);
}

/**
 * The store on an opened engine, its change log's partitions settled first; closing the store
 * closes the engine's pool (as does a refusal).
 * @throws ConfigError when the store's partitions are not `options.feedPartitions`.
 */
export async function postgresStoreOn(
  engine: PostgresEngine,
  options: StoreBuildOptions = {},
): Promise<Store> {
  try {
    const feedPartitions = await settleFeedPartitions(engine.sql, options.feedPartitions);
    return createPostgresStore(engine, feedPartitions, options);
  } catch (error) {
    await engine.sql.close();
    throw error;
  }
}

/**
 * Commits the runner's transaction. A transaction a failed statement aborted answers COMMIT with
 * ROLLBACK, no error: that is a failure too (the unit's work caught a statement's error and went on).
 */
async function commit(runner: Runner): Promise<void> {
  const answer = await runner.command("COMMIT");
  if (answer !== "COMMIT") throw new Error(`the unit of work did not commit (the server answered ${answer})`);
}

/** The record reads a client shapes (filters, sizes, order), each run within its tenant's share. */
const SHARED_READS = [
  "findRecords",
  "findRecordByValue",
  "countReferencing",
  "listRecords",
  "countRecords",
  "listRelated",
  "readJson",
] as const;

/** `reads` with its record reads (SHARED_READS, the tenant their first argument) run within `share`. */
function withinShares(reads: StoreWriter, share: TenantShare): StoreWriter {
  const shared: Partial<Record<(typeof SHARED_READS)[number], unknown>> = {};
  for (const name of SHARED_READS) {
    const read = reads[name] as ((tenantId: string, ...rest: unknown[]) => Promise<unknown>) | undefined;
    if (read)
      shared[name] = (tenantId: string, ...rest: unknown[]) =>
        share.run(tenantId, () => read(tenantId, ...rest));
  }
  return { ...reads, ...shared } as StoreWriter;
}

/** The store on an opened engine whose change log has `feedPartitions`; closing the store closes the pool. */
function createPostgresStore(
  engine: PostgresEngine,
  feedPartitions: number,
  options: StoreBuildOptions,
): Store {
  const { sql, statementTimeoutMs } = engine;
  const policy = options.retry ?? DEFAULT_RETRY;
  const lockTimeout = Math.max(1, Math.round(options.lockTimeoutMs ?? 200));
  const begin = `BEGIN ISOLATION LEVEL SERIALIZABLE; SET LOCAL lock_timeout = ${lockTimeout}`;
  const schemas = createTenantSchemas();
  const pool = createRunner(sql, undefined, statementTimeoutMs);
  const share = createTenantShare({
    share: options.tenantShare ?? Math.ceil(engine.poolSize / 2),
    // A turn comes within one statement's time limit unless the tenant's reads queue deep.
    maxWaitMs: statementTimeoutMs,
    maxWaiting: MAX_WAITING_PER_TENANT,
  });
  const reads = withinShares(
    createPostgresSession(pool, schemas.reader(pool), null, feedPartitions).store,
    share,
  );
  const growth = createTableGrowth((text) => pool.run(text), options.analyzeAfterRows);
  const underWay = new Set<Promise<unknown>>();
  const commitListeners = new Set<(partition: number) => void>();
  /** The LISTEN on the change log's channel: one connection of the client's, opened for the first listener. */
  let hearing: Promise<SQL.ListenSubscription | null> | null = null;
  const hear = () => {
    // A listener that cannot LISTEN (a PostgreSQL-wire service without it) keeps polling: the wake-up is a hint.
    hearing ??= sql
      .listen(CHANGES_CHANNEL, (payload: string) => {
        const partition = Number(payload);
        if (!Number.isInteger(partition) || partition < 0 || partition >= feedPartitions) return;
        for (const listener of commitListeners) listener(partition);
      })
      .catch(() => null);
  };

  /**
   * One run of `work` in a transaction on a connection of its own; rejects with what failed, noting
   * in `watch` whether a retry may help. The transaction is begun and ended by its own statements
   * (not the client's `begin`), so that it begins with its settings in one round trip and the
   * statements of its end go out together (the client pipelines a reserved connection's bound
   * statements sent in one turn).
   */
  const attempt = async <T>(work: (tx: StoreWriter) => Promise<T>, watch: FailureWatch): Promise<T> => {
    const connection = await sql.reserve();
    let open = false;
    try {
      const runner = createRunner(connection, watch, statementTimeoutMs);
      open = true;
      await runner.run(begin);
      const lookup = schemas.unit(runner);
      const session = createPostgresSession(runner, lookup, [] as ChangeEntry[], feedPartitions, growth);
      const value = await work(session.store);
      await session.finish();
      await commit(runner);
      open = false;
      lookup.committed();
      return value;
    } catch (error) {
      // Whatever failed, COMMIT included, no transaction goes back to the pool (a ROLLBACK of none is only a warning).
      if (open) await connection.unsafe("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      connection.release();
    }
  };

  const runUnitOfWork = async <T>(work: (tx: StoreWriter) => Promise<T>): Promise<T> => {
    for (let run = 1; ; run++) {
      const watch: FailureWatch = { retryable: false };
      try {
        return await attempt(work, watch);
      } catch (error) {
        if (!watch.retryable && !isRetryable(error)) throw error;
        if (run >= policy.attempts)
          throw new UnavailableError(
            `the store could not serialize the unit of work in ${run} attempts (contention); try again`,
          );
        await Bun.sleep(retryDelayMs(run, policy, Math.random));
      }
    }
  };

  return {
    engine: "postgres",
    ...reads,
    unitOfWork<T>(work: (tx: StoreWriter) => Promise<T>): Promise<T> {
      const run = runUnitOfWork(work);
      const tracked = run.catch(() => undefined);
      underWay.add(tracked);
      void tracked.then(() => underWay.delete(tracked));
      return run;
    },
    // Each read runs on a snapshot of its own: every commit finished before it is seen already.
    requestArrived: () => {},
    refreshReads: () => {},
    async ping() {
      try {
        const [row] = await pool.rows<{ one: number }>("SELECT 1 AS one");
        return row?.one === 1;
      } catch {
        return false;
      }
    },
    onCommitted(listener) {
      commitListeners.add(listener);
      hear();
      return () => commitListeners.delete(listener);
    },
    async close() {
      while (underWay.size > 0) await Promise.all(underWay);
      await growth.settled();
      await (await hearing)?.unlisten().catch(() => undefined);
      await sql.close();
    },
  };
}
