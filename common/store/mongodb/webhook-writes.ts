/**
 * The webhook writes both processes make on MongoDB, as thin driver calls
 * over webhook-document.ts: moving the tenant's webhook set version (every
 * webhook write), and disabling a webhook (the dispatcher, on 410 Gone).
 * Each takes the ClientSession of the transaction it belongs to: the webhook
 * and its set version change together or not at all.
 */
import type { ClientSession, Db } from "mongodb";
import { COLLECTION } from "./layout.ts";
import {
  type CounterDocument,
  disableWebhookUpdate,
  type WebhookDocument,
  webhookFilter,
  webhookSetCounter,
} from "./webhook-document.ts";

/**
 * Moves the tenant's webhook set version on (from 0, none yet, to 1), in the transaction of
 * `session`. Every write that changes one of the tenant's webhooks calls it once it changed one:
 * readers cache the tenant's compiled webhooks by this version, so a write that skipped it would
 * go unseen.
 */
export async function bumpWebhookSetVersion(db: Db, session: ClientSession, tenantId: string): Promise<void> {
  const counter = webhookSetCounter(tenantId);
  await db
    .collection<CounterDocument>(counter.collection)
    .updateOne(counter.filter, counter.update, { upsert: counter.upsert, session });
}

/**
 * Disables the tenant's webhook `webhookId` with `reason`, `at` as when (its version grows), and
 * moves the tenant's webhook set version, in the transaction of `session`. A missing webhook is
 * no error and moves nothing. True when it disabled one.
 */
export async function disableWebhook(
  db: Db,
  session: ClientSession,
  tenantId: string,
  webhookId: string,
  reason: string,
  at: number,
): Promise<boolean> {
  const { matchedCount } = await db
    .collection<WebhookDocument>(COLLECTION.webhooks)
    .updateOne(webhookFilter(tenantId, webhookId), disableWebhookUpdate(reason, at), { session });
  if (matchedCount === 0) return false;
  await bumpWebhookSetVersion(db, session, tenantId);
  return true;
}
