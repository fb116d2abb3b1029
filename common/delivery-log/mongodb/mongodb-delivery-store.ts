/**
 * The DeliveryStore over the MongoDB engine (common/store/mongodb/, which
 * checked the replica set and created the layout): the API's collections,
 * through the driver. Each write is one transaction (transaction.ts: snapshot
 * reads, majority writes, the runs bounded as the API's units of work are),
 * resolved once committed, so an attempt logged as started before its request
 * leaves is in the log whatever happens to the process after. What a write
 * checks (the delivery unfinished, the webhook at the version its request was
 * built from) is read in its transaction's snapshot; what it writes is
 * attempt-plans.ts's. The delivery's status and its webhook are read together
 * in one transaction too (one snapshot), as the other engines read them in one
 * statement or transaction.
 */
import type { ClientSession } from "mongodb";
import {
  type ConfigVariableDocument,
  STORED_VARIABLE_PROJECTION,
  toStoredVariable,
  variablesFilter,
} from "../../store/mongodb/config-variable-document.ts";
import { toServiceError } from "../../store/mongodb/driver-errors.ts";
import { COLLECTION } from "../../store/mongodb/layout.ts";
import type { MongoEngine } from "../../store/mongodb/mongodb-engine.ts";
import { runInTransaction, type UnitOfWorkOptions } from "../../store/mongodb/transaction.ts";
import {
  DELIVERY_WEBHOOK_PROJECTION,
  disableWebhookUpdate,
  toDeliveryWebhook,
  type WebhookDocument,
  webhookFilter,
} from "../../store/mongodb/webhook-document.ts";
import { bumpWebhookSetVersion } from "../../store/mongodb/webhook-writes.ts";
import type { DeliveryStore } from "../delivery-store.ts";
import { COUNTED_FIELDS, type CountedDelivery, planFinish, planRecord, planStart } from "./attempt-plans.ts";
import { deliveryFilter } from "./delivery-log-plans.ts";
import { applyWrites, findOne, logCollections } from "./run-log-operations.ts";

/** What a delivery reads of its webhook. */
type DeliveryWebhookDocument = Pick<WebhookDocument, keyof typeof DELIVERY_WEBHOOK_PROJECTION>;

/** The dispatcher's port on an opened engine; closing the port closes the engine's client. */
export function createMongoDeliveryStore(
  engine: MongoEngine,
  options: Pick<UnitOfWorkOptions, "attempts"> = {},
): DeliveryStore {
  const { client, db } = engine;
  const collections = logCollections(db);
  const webhooks = db.collection<WebhookDocument>(COLLECTION.webhooks);
  const variables = db.collection<ConfigVariableDocument>(COLLECTION.configVariables);

  /** Runs `work` in one transaction (run again, from nothing, after a write conflict). */
  const transaction = async <T>(work: (session: ClientSession) => Promise<T>): Promise<T> => {
    const session = client.startSession();
    try {
      return await runInTransaction(session, work, options);
    } finally {
      await session.endSession().catch(() => undefined);
    }
  };

  /** The delivery's count and status, read in `session`'s snapshot. */
  const counted = (session: ClientSession, tenantId: string, deliveryId: string) =>
    findOne<CountedDelivery>(
      collections.deliveries,
      deliveryFilter(tenantId, deliveryId),
      COUNTED_FIELDS,
      session,
    );

  return {
    loadDelivery: (tenantId, deliveryId, webhookId) =>
      // One snapshot for both: the delivery's status and its webhook as of the same moment (a
      // transaction that only reads; a snapshot session would inherit the database's majority read
      // concern and read each at its own time).
      transaction(async (session) => {
        const delivery = await findOne<Pick<CountedDelivery, "status">>(
          collections.deliveries,
          deliveryFilter(tenantId, deliveryId),
          { status: 1 },
          session,
        );
        const webhook = await webhooks.findOne<DeliveryWebhookDocument>(webhookFilter(tenantId, webhookId), {
          projection: DELIVERY_WEBHOOK_PROJECTION,
          session,
        });
        return { status: delivery?.status ?? null, webhook: webhook ? toDeliveryWebhook(webhook) : null };
      }),
    async findVariables(tenantId, keys) {
      if (keys.length === 0) return [];
      try {
        const found = await variables
          .find<Pick<ConfigVariableDocument, "key" | "configType" | "value">>(
            variablesFilter(tenantId, keys),
            {
              projection: STORED_VARIABLE_PROJECTION,
            },
          )
          .toArray();
        return found.map(toStoredVariable);
      } catch (error) {
        throw toServiceError(error);
      }
    },
    startAttempt: (attempt) =>
      transaction(async (session) => {
        const delivery = await counted(session, attempt.tenantId, attempt.deliveryId);
        const webhook = await webhooks.findOne<Pick<WebhookDocument, "version">>(
          webhookFilter(attempt.tenantId, attempt.webhookId),
          { projection: { version: 1 }, session },
        );
        const { start, writes } = planStart(attempt, delivery, webhook?.version ?? null);
        await applyWrites(collections, writes, session);
        return start;
      }),
    finishAttempt: (tenantId, deliveryId, number, attempt, status) =>
      transaction((session) =>
        applyWrites(collections, planFinish(tenantId, deliveryId, number, attempt, status), session),
      ),
    recordAttempt: (tenantId, deliveryId, attempt, status) =>
      transaction(async (session) => {
        const delivery = await counted(session, tenantId, deliveryId);
        const { number, writes } = planRecord(tenantId, deliveryId, delivery, attempt, status);
        await applyWrites(collections, writes, session);
        return number;
      }),
    disableWebhook: (tenantId, webhookId, reason, at) =>
      transaction(async (session) => {
        const filter = webhookFilter(tenantId, webhookId);
        const { matchedCount } = await webhooks.updateOne(filter, disableWebhookUpdate(reason, at), {
          session,
        });
        // Only a webhook that exists moves its tenant's set version on (a missing one is no error).
        if (matchedCount > 0) await bumpWebhookSetVersion(db, session, tenantId);
      }),
    close: () => client.close(),
  };
}
