/**
 * The change log's partitions, as every engine keeps them: a store's log is split into P
 * partitions (P fixed when the store is created), a tenant's entries all go to one of them, and
 * commit order holds within a partition (across partitions no order holds). One reader per
 * partition consumes it (api/feed/partitioned-feed.ts), so P bounds how many API processes share
 * the reading.
 */

/** P of a new PostgreSQL store when FEED_PARTITIONS is unset. */
export const DEFAULT_FEED_PARTITIONS = 16;

/**
 * The partition of a tenant's change-log entries among `partitions`: FNV-1a of its id, so every
 * process agrees without a table (and a store created with 16 keeps the placement it always had).
 */
export function partitionOfTenant(tenantId: string, partitions: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < tenantId.length; i++) {
    hash ^= tenantId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % partitions;
}
