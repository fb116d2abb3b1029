/**
 * Units of work on SQLite's one writer, committed in groups. Units run one at
 * a time, as before. A group starts on the turn of the event loop after its
 * first unit arrived (as the dispatcher's group commit does), so the units of
 * every request handled in the same turn join it; those that arrive while a
 * group is under way wait for the next. A group runs its units in one
 * transaction, each inside a savepoint of its own: a unit that throws is
 * rolled back to its savepoint alone, the others commit together, and each is
 * answered once the group's COMMIT is done. A commit's cost (its WAL frames
 * and write calls, the write lock's statements, a checkpoint now and then) is
 * paid once per group rather than once per unit (32 clients inserting one
 * record each make groups of ~17 units; ~2 when a group started at once). A
 * lone unit runs as a group of one, in a plain transaction. Should SQLite
 * roll the whole transaction back (an I/O error, a full disk), the units that
 * had succeeded are run again in the next group (the port allows it:
 * store.ts) and only the failing one is rejected.
 */
import type { StoreWriter } from "../store.ts";

/** The writer's side: the statements this needs and the session units write through. */
export interface GroupWriter {
  run(sql: string): unknown;
  readonly inTransaction: boolean;
}

export interface GroupCommitDeps {
  writer: GroupWriter;
  session: StoreWriter;
  /** Takes the write lock (BEGIN IMMEDIATE), waiting for another process's. */
  begin(): Promise<void>;
  /** Runs just before each COMMIT. */
  beforeCommit(): void;
  /** Units in one group at most (a group holds the write lock while its units run). */
  maxGroup?: number;
}

interface Waiting {
  work: (tx: StoreWriter) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** Resolves on the event loop's next turn, once the I/O of this one (other requests) has been handled. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createGroupCommit(deps: GroupCommitDeps) {
  const { writer, session, begin, beforeCommit, maxGroup = 32 } = deps;
  const waiting: Waiting[] = [];
  let draining: Promise<void> | null = null;

  /** Runs one group; the units to run again (the transaction was lost) go back to the front. */
  async function runGroup(group: Waiting[]): Promise<void> {
    try {
      await begin();
    } catch (error) {
      for (const unit of group) unit.reject(error);
      return;
    }
    const alone = group.length === 1;
    const succeeded: { unit: Waiting; value: unknown }[] = [];
    for (let i = 0; i < group.length; i++) {
      const unit = group[i] as Waiting;
      try {
        if (!alone) writer.run("SAVEPOINT unit");
        const value = await unit.work(session);
        if (!alone) writer.run("RELEASE unit");
        succeeded.push({ unit, value });
      } catch (error) {
        unit.reject(error);
        if (alone) {
          if (writer.inTransaction) writer.run("ROLLBACK");
          return;
        }
        if (!undoUnit()) {
          waiting.unshift(...succeeded.map((done) => done.unit), ...group.slice(i + 1));
          return;
        }
      }
    }
    try {
      beforeCommit();
      writer.run("COMMIT");
    } catch (error) {
      if (writer.inTransaction) writer.run("ROLLBACK");
      for (const { unit } of succeeded) unit.reject(error);
      return;
    }
    for (const { unit, value } of succeeded) unit.resolve(value);
  }

  /** Rolls a failed unit back to its savepoint; false when the whole transaction is gone. */
  function undoUnit(): boolean {
    if (!writer.inTransaction) return false;
    try {
      writer.run("ROLLBACK TO unit");
      writer.run("RELEASE unit");
      return true;
    } catch {
      if (writer.inTransaction) writer.run("ROLLBACK");
      return false;
    }
  }

  async function drain(): Promise<void> {
    try {
      while (waiting.length > 0) await runGroup(waiting.splice(0, maxGroup));
    } finally {
      draining = null;
    }
  }

  return {
    /** Runs `work` in the next group; resolves once that group committed. */
    unitOfWork<T>(work: (tx: StoreWriter) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        waiting.push({ work, resolve: resolve as (value: unknown) => void, reject });
        draining ??= nextTurn().then(drain);
      });
    },
    /** Resolves once every unit handed in so far is answered. */
    async settled(): Promise<void> {
      while (draining) await draining;
    },
  };
}
