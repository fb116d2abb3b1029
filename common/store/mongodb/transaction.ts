/**
 * A transaction on MongoDB, as both processes run one (the API's units of
 * work, api/store/mongodb/mongodb-store.ts; the dispatcher's writes to the
 * delivery log, common/delivery-log/mongodb/): one multi-document transaction
 * through the driver's `session.withTransaction`, snapshot reads and majority writes on
 * the primary. The driver runs the work again when it fails with a
 * TransientTransactionError (a write conflict, code 112, above all: the way
 * snapshot isolation refuses the second of two transactions writing one
 * document, which api/store/mongodb/write-skew.ts relies on), pausing with its own backoff;
 * here the runs are counted and bounded, and what still fails is turned into
 * the service's typed error (driver-errors.ts).
 *
 * Each run starts from nothing: the work is handed the run's session and
 * builds all its state inside the run (the port's rule for `unitOfWork`), so
 * a run that is thrown away leaves nothing behind; what must happen after
 * the commit (waking the feed, say) is done by the caller once this resolves.
 */
import type { ClientSession, TransactionOptions } from "mongodb";
import { UnavailableError } from "../../errors.ts";
import { isTransient, type KeyNamer, toServiceError } from "./driver-errors.ts";

/** The members of the driver's ClientSession a unit of work calls. */
export type TransactionSession = Pick<ClientSession, "withTransaction">;

/**
 * Every transaction's options: reads from one snapshot (so a check and the write it allows see
 * the same data, and a concurrent write to a document this one writes is a write conflict), writes
 * acknowledged by a majority (so a commit survives a failover and the change stream, which shows
 * only majority-committed changes, will show it), on the primary.
 */
export const TRANSACTION_OPTIONS: Readonly<TransactionOptions> = {
  readConcern: { level: "snapshot" },
  writeConcern: { w: "majority" },
  readPreference: "primary",
};

/**
 * Runs of the work at most, the first included: as many as the PostgreSQL engine allows a unit
 * that fails to serialize (api/store/postgres/unit-of-work-retry.ts). The driver pauses between
 * runs (5 ms × 1.5ⁿ, at most 500 ms, jittered), about 5 s at worst over 20 runs.
 */
const DEFAULT_ATTEMPTS = 20;

export interface UnitOfWorkOptions {
  /** Runs at most (default DEFAULT_ATTEMPTS). */
  attempts?: number;
  /** Names the object and field of a unique-key clash (driver-errors.ts). */
  nameKey?: KeyNamer;
}

/**
 * Runs `work` in one transaction of `session` and resolves to what its last run returned, once
 * committed. `work` gets the session and the run's number (1, 2, …) and may be called again after
 * a transient failure, at most `attempts` times in all.
 * @throws UnavailableError when the last allowed run still met a transient failure; the service's
 * error for a driver error driver-errors.ts knows (a duplicate key → UniqueViolationError or
 * ConflictError, no server → UnavailableError, …); anything `work` threw, as thrown.
 */
export async function runInTransaction<T>(
  session: TransactionSession,
  work: (session: ClientSession, run: number) => Promise<T>,
  options: UnitOfWorkOptions = {},
): Promise<T> {
  const attempts = options.attempts ?? DEFAULT_ATTEMPTS;
  let runs = 0;
  try {
    return await session.withTransaction(async (runSession) => {
      runs++;
      try {
        return await work(runSession, runs);
      } catch (error) {
        // Not a MongoError: withTransaction aborts and rethrows it rather than running the work again.
        if (isTransient(error) && runs >= attempts)
          throw new UnavailableError(
            `the store could not commit the unit of work in ${runs} attempts (write conflicts); try again`,
          );
        throw error;
      }
    }, TRANSACTION_OPTIONS);
  } catch (error) {
    throw toServiceError(error, options.nameKey);
  }
}
