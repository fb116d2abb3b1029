/**
 * Reads and writes over one runner: the pool's (reads outside units of work)
 * or a unit of work's transaction. A unit's session also holds what the unit
 * keeps until its end: the change-log entries it appended (written in commit
 * order as it finishes) and the tenants' schemas it learnt.
 */
import { createDeliveryLogSession } from "../../../common/delivery-log/postgres/delivery-log-session.ts";
import type { Runner } from "../../../common/store/postgres/runner.ts";
import type { ChangeEntry } from "../../model/record-values.ts";
import type { StoreWriter } from "../store.ts";
import { createCatalogueSession } from "./catalogue-session.ts";
import { createChangeLogSession } from "./change-log-session.ts";
import { createConfigSession } from "./config-session.ts";
import { createIdentitySession } from "./identity-session.ts";
import { createQuerySession } from "./query-records.ts";
import { createRecordConstraints } from "./record-constraints.ts";
import { createRecordSession } from "./record-session.ts";
import { recordTablesRunner } from "./record-tables-runner.ts";
import { createRetentionSession } from "./retention-session.ts";
import type { TableGrowth } from "./table-growth.ts";
import type { SchemaLookup } from "./tenant-schemas.ts";
import { createWebhookSession } from "./webhook-session.ts";

export interface PostgresSession {
  /** Every aggregate's part (the pool's session is used for reads only). */
  store: StoreWriter;
  /** Writes what the unit of work kept for its end; call last, before the commit. */
  finish(): Promise<void>;
}

/**
 * A session over `db`; `changes` holds a unit of work's appended entries (null outside one);
 * `feedPartitions` is the store's P (feed-partitions.ts); `growth` hears of the rows written.
 */
export function createPostgresSession(
  db: Runner,
  schemas: SchemaLookup,
  changes: ChangeEntry[] | null,
  feedPartitions: number,
  growth?: TableGrowth,
): PostgresSession {
  const { flush, ...changeLog } = createChangeLogSession(db, changes, feedPartitions);
  const records = recordTablesRunner(db);
  const store: StoreWriter = {
    ...createIdentitySession(db, schemas),
    ...createCatalogueSession(db, schemas),
    ...createRecordSession(records, schemas, createRecordConstraints(records), growth),
    ...createQuerySession(records, schemas),
    ...changeLog,
    ...createWebhookSession(db),
    ...createConfigSession(db),
    ...createDeliveryLogSession(db),
    ...createRetentionSession(db, feedPartitions),
  };
  return { store, finish: flush };
}
