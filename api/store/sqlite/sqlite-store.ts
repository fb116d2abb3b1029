/**
 * The embedded store engine: one SQLite file in WAL mode, opened and migrated
 * by common/store/sqlite/sqlite-engine.ts. Writes go through a
 * single writer connection (the engine's first), one unit of work at a time (a promise queue keeps
 * an awaiting unit of work from interleaving with another); reads outside a
 * unit of work use a second connection, so they never see uncommitted data.
 * That connection's reads share a snapshot per turn of the event loop
 * (read-snapshots.ts), dropped before each of our commits. (In memory, for
 * tests, there is one connection and none of this.)
 */
import { SQLITE_LOCK_WAIT_MS } from "../../../common/store/sqlite/sqlite-connection.ts";
import type { SqliteEngine } from "../../../common/store/sqlite/sqlite-engine.ts";
import { beginImmediate } from "../../../common/store/sqlite/sqlite-write-lock.ts";
import type { Store, StoreWriter } from "../store.ts";
import { createReadSnapshots, type ReadSnapshots } from "./read-snapshots.ts";
import { createSqliteSession } from "./sqlite-session.ts";

/** The store over an opened SQLite engine; it takes the engine's connection over (and closes it). */
export function createSqliteStore(engine: SqliteEngine): Store {
  const writer = engine.connection;
  const reader = engine.path === ":memory:" ? writer : engine.connect();
  const writeSession = createSqliteSession(writer);
  // In memory there is one connection: its reads cannot hold a transaction a unit of work would need.
  const snapshots = reader === writer ? null : createReadSnapshots(reader);
  const readSession = snapshots
    ? inSnapshots(createSqliteSession(reader), snapshots)
    : createSqliteSession(reader);
  let queue: Promise<unknown> = Promise.resolve();

  const runUnitOfWork = async <T>(work: (tx: StoreWriter) => Promise<T>): Promise<T> => {
    // While the dispatcher (or the admin tool) holds the write lock, wait on a timer, not asleep in SQLite.
    await beginImmediate(writer, SQLITE_LOCK_WAIT_MS);
    try {
      const result = await work(writeSession);
      // Before the commit, so that the checkpoint it may run is not held back by our own reader.
      snapshots?.drop();
      writer.run("COMMIT");
      return result;
    } catch (error) {
      if (writer.inTransaction) writer.run("ROLLBACK");
      throw error;
    }
  };

  return {
    engine: "sqlite",
    ...readSession,
    unitOfWork<T>(work: (tx: StoreWriter) => Promise<T>): Promise<T> {
      const run = queue.then(() => runUnitOfWork(work));
      queue = run.catch(() => undefined);
      return run;
    },
    requestArrived: () => snapshots?.arrived(),
    refreshReads: () => snapshots?.drop(),
    ping: async () => reader.query<{ one: number }, []>("SELECT 1 AS one").get()?.one === 1,
    close: async () => {
      await queue;
      snapshots?.drop();
      if (reader !== writer) reader.close();
      writer.close();
    },
  };
}

/** The session with every method entering the turn's read snapshot first. */
function inSnapshots<S extends object>(session: S, snapshots: ReadSnapshots): S {
  const entries = Object.entries(session).map(([name, method]) => [
    name,
    (...args: unknown[]) => {
      try {
        snapshots.enter();
      } catch (error) {
        return Promise.reject(error);
      }
      return (method as (...args: unknown[]) => unknown)(...args);
    },
  ]);
  return Object.fromEntries(entries) as S;
}
