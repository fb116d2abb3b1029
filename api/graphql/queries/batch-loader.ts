/**
 * Collects the keys asked for in one tick of execution and fetches them with
 * one call: what makes a nested selection cost one store query per field per
 * level, not one per parent row.
 */
export interface BatchLoader<K, V> {
  load(key: K): Promise<V>;
}

export function createBatchLoader<K, V>(
  fetch: (keys: K[]) => Promise<Map<K, V>>,
  missing: V,
): BatchLoader<K, V> {
  let pending: { keys: K[]; result: Promise<Map<K, V>> } | null = null;
  return {
    load(key) {
      if (!pending) {
        const batch: { keys: K[]; result: Promise<Map<K, V>> } = {
          keys: [],
          result: Promise.resolve(new Map()),
        };
        // Resolvers of sibling rows run in the same tick: fetch once they all have asked.
        batch.result = Promise.resolve().then(() => {
          pending = null;
          return fetch([...new Set(batch.keys)]);
        });
        pending = batch;
      }
      pending.keys.push(key);
      return pending.result.then((values) => values.get(key) ?? missing);
    },
  };
}
