/** The change log as tests read it: a tenant's partition, and every partition's entries. */
import type { LoggedChange } from "../../api/model/record-values.ts";
import { partitionOfTenant } from "../../api/store/feed-partitions.ts";
import type { StoreReader } from "../../api/store/store.ts";

/** The partition of the store's change log a tenant's entries go to. */
export const partitionOf = (store: StoreReader, tenantId: string): number =>
  partitionOfTenant(tenantId, store.feedPartitions());

/** Every entry of every partition (up to `limit` each), partition by partition, each in commit order. */
export async function wholeLog(store: StoreReader, limit = 100_000): Promise<LoggedChange[]> {
  const entries: LoggedChange[] = [];
  for (let p = 0; p < store.feedPartitions(); p++)
    entries.push(...(await store.readChanges(p, null, limit)).entries);
  return entries;
}
