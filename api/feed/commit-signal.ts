/**
 * Tells the change feed that a mutation just committed, so it reads now instead of at its next poll
 * (commit-broadcast.ts carries it to every API process).
 */
export interface CommitSignal {
  notify(): void;
  listen(listener: () => void): void;
}
