/**
 * A bounded, time-limited cache of token lookups, so the revocation check on
 * every request costs a map read. Entries live `ttlMs`; a revocation made by
 * this process drops its entry at once, others see it within `ttlMs`.
 */
import { setNewest } from "../../common/bounded-map.ts";

export interface TokenCache<V> {
  get(key: string, now: number): V | undefined;
  set(key: string, value: V, now: number): void;
  delete(key: string): void;
}

export function createTokenCache<V>(ttlMs: number, maxEntries = 10_000): TokenCache<V> {
  const entries = new Map<string, { value: V; expires: number }>();
  return {
    get(key, now) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expires <= now) {
        entries.delete(key);
        return undefined;
      }
      return entry.value;
    },
    set(key, value, now) {
      setNewest(entries, key, { value, expires: now + ttlMs }, maxEntries);
    },
    delete: (key) => void entries.delete(key),
  };
}
