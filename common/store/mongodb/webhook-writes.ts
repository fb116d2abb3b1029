/**
 * The one webhook write both processes share on MongoDB, as a thin driver
 * call over webhook-document.ts: moving the tenant's webhook set version.
 * The API's webhook writes call it (api/store/mongodb/webhooks/webhook-session.ts);
 * so does the dispatcher's disable on 410 Gone, after its update
 * (webhookFilter + disableWebhookUpdate) matched a webhook. Each call takes
 * the ClientSession of the transaction the webhook write belongs to: the
 * webhook and its set version change together or not at all.
 */
import type { ClientSession, Db } from "mongodb";
import { type CounterDocument, webhookSetCounter } from "./webhook-document.ts";

/**
 * Moves the tenant's webhook set version on (from 0, none yet, to 1), in the transaction of
 * `session`. Every write that changes one of the tenant's webhooks calls it once it changed one
 * (a write that matched nothing does not: the version says the set changed): readers cache the
 * tenant's compiled webhooks by this version, so a write that skipped it would go unseen.
 */
export async function bumpWebhookSetVersion(db: Db, session: ClientSession, tenantId: string): Promise<void> {
  const counter = webhookSetCounter(tenantId);
  await db
    .collection<CounterDocument>(counter.collection)
    .updateOne(counter.filter, counter.update, { upsert: counter.upsert, session });
}
