/**
 * The embedded store engine: one SQLite file in WAL mode, opened and migrated
 * by common/store/sqlite/sqlite-engine.ts. Writes go through a
 * single writer connection (the engine's first), one unit of work at a time, those that arrive
 * together committed in one transaction (group-commit.ts); reads outside a
 * unit of work use a second connection, so they never see uncommitted data.
 * That connection's reads share a snapshot per turn of the event loop
 * (read-snapshots.ts), dropped before each of our commits. WAL checkpoints run on a worker
 * thread (common/store/sqlite/wal-checkpointer.ts), never in a commit of ours. (In memory, for
 * tests, there is one connection and none of this.)
 */
import { SQLITE_LOCK_WAIT_MS } from "../../../common/store/sqlite/sqlite-connection.ts";
import type { SqliteEngine } from "../../../common/store/sqlite/sqlite-engine.ts";
import { beginImmediate } from "../../../common/store/sqlite/sqlite-write-lock.ts";
import { startWalCheckpointer } from "../../../common/store/sqlite/wal-checkpointer.ts";
import type { Store } from "../store.ts";
import { createGroupCommit } from "./group-commit.ts";
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
  // Commits never checkpoint on this thread (a file's WAL only; in memory there is none).
  const checkpointer = reader === writer ? null : startWalCheckpointer(engine.path, writer);
  const units = createGroupCommit({
    writer,
    session: writeSession,
    // While the dispatcher (or the admin tool) holds the write lock, wait on a timer, not asleep in SQLite.
    begin: () => beginImmediate(writer, SQLITE_LOCK_WAIT_MS),
    // So that the checkpoint a commit may run is not held back by our own reader.
    beforeCommit: () => snapshots?.drop(),
  });

  return {
    engine: "sqlite",
    ...readSession,
    unitOfWork: units.unitOfWork,
    requestArrived: () => snapshots?.arrived(),
    refreshReads: () => snapshots?.drop(),
    ping: async () => reader.query<{ one: number }, []>("SELECT 1 AS one").get()?.one === 1,
    close: async () => {
      await units.settled();
      await checkpointer?.stop();
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
