/**
 * The MongoDB store engine (experimental: a process starts on it only with
 * STORE_EXPERIMENTAL=mongodb), built on the engine common/store/mongodb/
 * opened (the replica set checked, the layout created). A unit of work is one
 * transaction through `withTransaction` (common/store/mongodb/transaction.ts), each run with a
 * session of its own and its change entries written at its end as one outbox
 * document; the change log is read from a change stream on that outbox
 * (feed/); every other aggregate's members are mongodb-session.ts's.
 */

import { toServiceError } from "../../../common/store/mongodb/driver-errors.ts";
import type { MongoEngine } from "../../../common/store/mongodb/mongodb-engine.ts";
import { runInTransaction, type UnitOfWorkOptions } from "../../../common/store/mongodb/transaction.ts";
import type { ChangeEntry } from "../../model/record-values.ts";
import type { Store, StoreWriter } from "../store.ts";
import { createChangeStreamFeed } from "./feed/change-stream-feed.ts";
import { createMongoSession } from "./mongodb-session.ts";

/** How long a health check waits for the server's answer, ms. */
const PING_TIMEOUT_MS = 2000;

/** The store on an opened engine; closing the store closes the engine's client. */
export function createMongoStore(
  engine: MongoEngine,
  options: Pick<UnitOfWorkOptions, "attempts"> = {},
): Store {
  const { client, db } = engine;
  const feed = createChangeStreamFeed(db);
  const reads = withServiceErrors(createMongoSession(db, feed, null, null).store);
  const underWay = new Set<Promise<unknown>>();

  const runUnitOfWork = async <T>(work: (tx: StoreWriter) => Promise<T>): Promise<T> => {
    const session = client.startSession();
    try {
      return await runInTransaction(
        session,
        async (runSession) => {
          // Built afresh for each run: nothing of a run thrown away is kept.
          const unit = createMongoSession(db, feed, runSession, [] as ChangeEntry[]);
          const value = await work(unit.store);
          await unit.finish();
          return value;
        },
        options,
      );
    } finally {
      await session.endSession().catch(() => undefined);
    }
  };

  return {
    engine: "mongodb",
    ...reads,
    unitOfWork<T>(work: (tx: StoreWriter) => Promise<T>): Promise<T> {
      const run = runUnitOfWork(work);
      const tracked = run.catch(() => undefined);
      underWay.add(tracked);
      void tracked.then(() => underWay.delete(tracked));
      return run;
    },
    // Reads outside a unit of work read the primary's majority-committed data, each on its own: nothing to refresh.
    requestArrived: () => {},
    refreshReads: () => {},
    async ping() {
      try {
        const answer = await db.command({ ping: 1 }, { timeoutMS: PING_TIMEOUT_MS });
        return answer.ok === 1;
      } catch {
        return false;
      }
    },
    async close() {
      while (underWay.size > 0) await Promise.all(underWay);
      await feed.close();
      await client.close();
    },
  };
}

/**
 * The members with every rejection mapped to the service's errors (driver-errors.ts): outside a
 * unit of work nothing else maps them, and a driver error would reach the API as an opaque 500
 * (no server → UNAVAILABLE instead). Inside one, the unit of work maps what its runs leave.
 */
function withServiceErrors<S extends object>(members: S): S {
  const entries = Object.entries(members).map(([name, member]) => [
    name,
    typeof member !== "function"
      ? member
      : (...args: unknown[]) => {
          let result: unknown;
          try {
            result = (member as (...args: unknown[]) => unknown)(...args);
          } catch (error) {
            throw toServiceError(error);
          }
          // Members answering at once (feedPartitions) stay as they are.
          return result instanceof Promise
            ? result.catch((error: unknown) => {
                throw toServiceError(error);
              })
            : result;
        },
  ]);
  return Object.fromEntries(entries) as S;
}
