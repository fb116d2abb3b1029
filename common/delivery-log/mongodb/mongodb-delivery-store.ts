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
 * from one snapshot (a snapshot session), as the other engines read them in one
 * statement or transaction.
 */
import type { ClientSession, Document } from "mongodb";
import { COLLECTION } from "../../store/mongodb/layout.ts";
import type { MongoEngine } from "../../store/mongodb/mongodb-engine.ts";
import { runInTransaction, type UnitOfWorkOptions } from "../../store/mongodb/transaction.ts";
import { toServiceError } from "../../store/mongodb/driver-errors.ts";
import type { DeliveryStore } from "../delivery-store.ts";
import { COUNTED_FIELDS, type CountedDelivery, planFinish, planRecord, planStart } from "./attempt-plans.ts";
import { deliveryFilter } from "./delivery-log-plans.ts";
import { applyWrites, findOne, logCollections } from "./run-log-operations.ts";
import {
  deliveryWebhookOf,
  disableWrites,
  type StoredWebhook,
  WEBHOOK_FIELDS,
  webhookFilter,
} from "./delivery-webhook.ts";
import { variablesFilter, storedVariableOf, type StoredConfigVariable, VARIABLE_FIELDS } from "./delivery-variables.ts";

/** The dispatcher's port on an opened engine; closing the port closes the engine's client. */
export function createMongoDeliveryStore(
  engine: MongoEngine,
  options: Pick<UnitOfWorkOptions, "attempts"> = {},
): DeliveryStore {
  const { client, db } = engine;
  const collections = logCollections(db);
  const webhooks = db.collection<Document>(COLLECTION.webhooks);
  const variables = db.collection<Document>(COLLECTION.configVariables);
  const counters = db.collection<Document>(COLLECTION.counters);

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
    findOne<CountedDelivery>(collections.deliveries, deliveryFilter(tenantId, deliveryId), COUNTED_FIELDS, session);

  return {
    async loadDelivery(tenantId, deliveryId, webhookId) {
      // Both reads at one point in time: the delivery's status and its webhook as of the same moment.
      const session = client.startSession({ snapshot: true });
      try {
        const delivery = await findOne<Pick<CountedDelivery, "status">>(
          collections.deliveries,
          deliveryFilter(tenantId, deliveryId),
          { status: 1 },
          session,
        );
        const stored = await findOne<StoredWebhook>(
          webhooks,
          webhookFilter(tenantId, webhookId),
          WEBHOOK_FIELDS,
          session,
        );
        return { status: delivery?.status ?? null, webhook: stored ? deliveryWebhookOf(stored) : null };
      } catch (error) {
        throw toServiceError(error);
      } finally {
        await session.endSession().catch(() => undefined);
      }
    },
    async findVariables(tenantId, keys) {
      if (keys.length === 0) return [];
      try {
        const found = await variables
          .find(variablesFilter(tenantId, keys), { projection: VARIABLE_FIELDS })
          .toArray();
        return (found as StoredConfigVariable[]).map(storedVariableOf);
      } catch (error) {
        throw toServiceError(error);
      }
    },
    startAttempt: (attempt) =>
      transaction(async (session) => {
        const delivery = await counted(session, attempt.tenantId, attempt.deliveryId);
        const webhook = await findOne<Pick<StoredWebhook, "version">>(
          webhooks,
          webhookFilter(attempt.tenantId, attempt.webhookId),
          { version: 1 },
          session,
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
        const { webhook, counter } = disableWrites(tenantId, webhookId, reason, at);
        const { matchedCount } = await webhooks.updateOne(webhook.filter, webhook.update, { session });
        // Only a webhook that exists moves its tenant's set version on.
        if (matchedCount > 0)
          await counters.updateOne(counter.filter, counter.update, { upsert: true, session });
      }),
    close: () => client.close(),
  };
}
