/** Tells the change feed that this process just committed a mutation, so it reads now instead of at its next poll. */
export interface CommitSignal {
  notify(): void;
  listen(listener: () => void): void;
}

export function createCommitSignal(): CommitSignal {
  const listeners: (() => void)[] = [];
  return {
    notify: () => {
      for (const listener of listeners) listener();
    },
    listen: (listener) => void listeners.push(listener),
  };
}
