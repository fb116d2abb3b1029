/**
 * Tells the change feed that a mutation just committed to a partition of the change log, so that
 * partition's reader reads now instead of at its next poll (commit-broadcast.ts carries it to every
 * API process).
 */
export interface CommitSignal {
  notify(partition: number): void;
  listen(listener: (partition: number) => void): void;
}
