/**
 * A bounded, time-limited cache of token lookups, so the revocation check on
 * every request costs a map read. Entries live `ttlMs`; the auth service drops
 * them sooner when a token is revoked (auth-service.ts says how every process
 * learns of it).
 */
import { setNewest } from "../../common/bounded-map.ts";

export interface TokenCache<V> {
  get(key: string, now: number): V | undefined;
  set(key: string, value: V, now: number): void;
  delete(key: string): void;
  /** Drops every entry. */
  clear(): void;
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
    clear: () => entries.clear(),
  };
}
