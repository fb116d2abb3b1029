/**
 * Reads and writes over one SQLite connection. The store uses one session on
 * its reader connection and one on its writer connection (inside units of
 * work). Statements are prepared once per connection and reused.
 */
import type { Database } from "bun:sqlite";
import { createDeliveryLogSession } from "../../../common/delivery-log/sqlite/delivery-log-session.ts";
import { quoteIdent } from "../sql/quote-ident.ts";
import type { StoreWriter } from "../store.ts";
import { tableName } from "./catalogue-ddl.ts";
import { createCatalogueSession } from "./catalogue-session.ts";
import { createChangeLogSession } from "./change-log-session.ts";
import { createConfigSession } from "./config-session.ts";
import { createIdentitySession } from "./identity-session.ts";
import { createQuerySession } from "./query-records.ts";
import { createRecordSession } from "./record-session.ts";
import { createRetentionSession } from "./retention-session.ts";
import { createWebhookSession } from "./webhook-session.ts";

/** Every aggregate's part over `db`, as one writer (the reader connection's session is used for reads only). */
export function createSqliteSession(db: Database): StoreWriter {
  const { storageNo, ...identity } = createIdentitySession(db);
  return {
    ...identity,
    ...createCatalogueSession(db, storageNo),
    ...createRecordSession(db, storageNo),
    ...createQuerySession(db, (tenantId, object) => quoteIdent(tableName(storageNo(tenantId), object))),
    ...createChangeLogSession(db),
    ...createWebhookSession(db),
    ...createConfigSession(db),
    ...createDeliveryLogSession(db),
    ...createRetentionSession(db),
  };
}
