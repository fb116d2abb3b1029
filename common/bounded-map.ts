/**
 * Bounded in-memory caches over a Map: Maps iterate in insertion order, so
 * the first key is the one set longest ago.
 */

/** Sets `key` as `map`'s newest entry, then drops the oldest while more than `max` remain. */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > max) map.delete(map.keys().next().value as K);
}
