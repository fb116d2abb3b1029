/**
 * GraphiQL's storage (its tabs, operations, history): this tab's sessionStorage, under GraphiQL's
 * own `graphiql:` keys, until `close()`, then nothing.
 *
 * - Its `clear()` (GraphiQL's "Clear storage" setting) and `length` see GraphiQL's keys only: the
 *   signed-in token beside them stays.
 * - Closed at sign-out: GraphiQL saves some edits after a pause, and such a late write must not bring
 *   back what sign-out cleared.
 */

const PREFIX = "graphiql:";

export interface GraphiQLStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
  clear(): void;
  readonly length: number;
  /** From now on, reads find nothing and writes are dropped. */
  close(): void;
}

export function createGraphiQLStorage(): GraphiQLStorage {
  let open = true;
  const ownKeys = () => {
    const keys: string[] = [];
    for (let i = 0; i < sessionStorage.length; i++) {
      const key = sessionStorage.key(i);
      if (key?.startsWith(PREFIX)) keys.push(key);
    }
    return keys;
  };
  return {
    getItem: (key) => (open ? sessionStorage.getItem(key) : null),
    setItem: (key, value) => {
      if (open) sessionStorage.setItem(key, value);
    },
    removeItem: (key) => {
      if (open) sessionStorage.removeItem(key);
    },
    clear: () => {
      if (open) for (const key of ownKeys()) sessionStorage.removeItem(key);
    },
    get length() {
      return open ? ownKeys().length : 0;
    },
    close: () => {
      open = false;
    },
  };
}
