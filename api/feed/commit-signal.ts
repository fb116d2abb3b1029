/**
 * Tells the change feed that a mutation just committed to a partition of the change log, so that
 * partition's reader reads now instead of at its next poll (commit-broadcast.ts carries it to every
 * API process).
 */
export interface CommitSignal {
  notify(partition: number): void;
  /**
   * `listener` is told of every commit; `readsHere` says whether the partition's reader runs in this
   * process, when no other process need be told of a commit to it.
   */
  listen(listener: (partition: number) => void, readsHere?: (partition: number) => boolean): void;
}
