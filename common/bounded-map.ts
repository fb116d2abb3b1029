/**
 * Bounded in-memory caches over a Map: Maps iterate in insertion order, so
 * the first key is the one set (or used) longest ago.
 */

/** Sets `key` as `map`'s newest entry, then drops the oldest while more than `max` remain. */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > max) map.delete(map.keys().next().value as K);
}

export type ByteBoundedMap<K, V> = ReturnType<typeof createByteBoundedMap<K, V>>;

/**
 * A least-recently-used map bounded by the sum of its entries' bytes, as the caller estimates them
 * (for caches whose entries differ in size by orders of magnitude, where a count bounds nothing).
 * The sum never exceeds `maxBytes`: the least recently used entries are dropped first, and an entry
 * over `maxBytes` alone is not kept.
 */
export function createByteBoundedMap<K, V>(maxBytes: number) {
  const entries = new Map<K, { value: V; bytes: number }>();
  let total = 0;

  const remove = (key: K) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    total -= entry.bytes;
  };
  const trim = () => {
    for (const key of entries.keys()) {
      if (total <= maxBytes) return;
      remove(key);
    }
  };

  return {
    /** The value of `key`, which becomes the most recently used. */
    get(key: K): V | undefined {
      const entry = entries.get(key);
      if (!entry) return undefined;
      entries.delete(key);
      entries.set(key, entry);
      return entry.value;
    },

    /** Keeps `value` as the newest entry, of `bytes`. @returns whether it is kept (false when over `maxBytes` alone). */
    set(key: K, value: V, bytes: number): boolean {
      remove(key);
      if (bytes > maxBytes) return false;
      entries.set(key, { value, bytes });
      total += bytes;
      trim();
      return true;
    },

    /**
     * Counts `bytes` more (or fewer, when negative) for `key`'s entry, when it still holds `value`
     * (something made for it later and kept with it), then drops the least recently used entries
     * (this one too, when it alone is over `maxBytes`) until the sum is within `maxBytes` again.
     */
    grow(key: K, value: V, bytes: number): void {
      const entry = entries.get(key);
      if (entry?.value !== value) return;
      entry.bytes += bytes;
      total += bytes;
      trim();
    },

    /** How many entries are kept, and the sum of their bytes. */
    usage(): { entries: number; bytes: number } {
      return { entries: entries.size, bytes: total };
    },
  };
}
