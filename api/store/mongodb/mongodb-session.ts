/**
 * One MongoDB session's view of the store: the implemented aggregates'
 * members (the change log, the counters, the record reads) and a typed refusal for every other
 * (incomplete-members.ts), bound to a unit of work's transaction or to none.
 */
import type { ClientSession, Db } from "mongodb";
import type { ChangeEntry } from "../../model/record-values.ts";
import type { StoreWriter } from "../store.ts";
import { createChangeLogSession } from "./change-log-session.ts";
import { createConfigSession } from "./config-session.ts";
import { createCounterSession } from "./counter-session.ts";
import type { ChangeStreamFeed } from "./feed/change-stream-feed.ts";
import { createIdentitySession } from "./identity-session.ts";
import { incompleteMembers } from "./incomplete-members.ts";
import { createRecordReadSession } from "./record-read-session.ts";
import { createWebhookSession } from "./webhook-session.ts";

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
  const store: StoreWriter = {
    ...incompleteMembers(),
    ...createCounterSession(db, session),
    ...createIdentitySession(db, session),
    ...createWebhookSession(db, session),
    ...createConfigSession(db, session),
    ...createRecordReadSession(db, session),
    ...changeLog,
  };
  return { store, finish: flush };
}
