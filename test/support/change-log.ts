/** The change log as tests read it: the partition a tenant's entries go to. */
import { partitionOfTenant } from "../../api/store/feed-partitions.ts";
import type { StoreReader } from "../../api/store/store.ts";

/** The partition of the store's change log a tenant's entries go to. */
export const partitionOf = (store: StoreReader, tenantId: string): number =>
  partitionOfTenant(tenantId, store.feedPartitions());
