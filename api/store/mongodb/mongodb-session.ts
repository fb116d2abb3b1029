/**
 * One MongoDB session's view of the store: every aggregate's members (identity,
 * counters, the catalogue, records read and written, webhooks, config
 * variables, the change log, the delivery log), bound to a unit of work's
 * transaction or to none.
 */
import type { ClientSession, Db } from "mongodb";
import { createDeliveryLogSession } from "../../../common/delivery-log/mongodb/delivery-log-session.ts";
import type { ChangeEntry } from "../../model/record-values.ts";
import { insertLookingUpFirst } from "../insert-looking-up-first.ts";
import type { StoreWriter } from "../store.ts";
import { createCatalogueSession } from "./catalogue/catalogue-session.ts";
import { createChangeLogSession } from "./change-log-session.ts";
import { createConfigSession } from "./config-vars/config-session.ts";
import { createCounterSession } from "./counter-session.ts";
import type { ChangeStreamFeed } from "./feed/change-stream-feed.ts";
import { createIdentitySession } from "./identity/identity-session.ts";
import { createRecordReadSession } from "./records/record-read-session.ts";
import { createRecordWriteSession } from "./records/record-write-session.ts";
import { createWebhookSession } from "./webhooks/webhook-session.ts";

export interface MongoSession {
  store: StoreWriter;
  /** Writes what the unit of work held back to its end (its outbox document). */
  finish(): Promise<void>;
}

/** The store on `db`, in the transaction of `session` when given (its change entries gathered in `unit`). */
export function createMongoSession(
  db: Db,
  feed: ChangeStreamFeed,
  session: ClientSession | null,
  unit: ChangeEntry[] | null,
): MongoSession {
  const { flush, ...changeLog } = createChangeLogSession(db, feed, session, unit);
  const writes = createRecordWriteSession(db, session);
  const reads = createRecordReadSession(db, session);
  const store: StoreWriter = {
    ...createCounterSession(db, session),
    ...createIdentitySession(db, session),
    ...createWebhookSession(db, session),
    ...createConfigSession(db, session),
    ...createCatalogueSession(db, session),
    ...writes,
    ...reads,
    insertUnlessTaken: insertLookingUpFirst(reads.findRecordByValue, writes.insertRecord),
    ...changeLog,
    ...createDeliveryLogSession(db, session),
  };
  return { store, finish: flush };
}
