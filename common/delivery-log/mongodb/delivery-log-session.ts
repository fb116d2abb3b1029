/**
 * The delivery log on MongoDB, as the API's store uses it
 * (api/store/mongodb/mongodb-session.ts spreads it into every session): the
 * deliveries the change feed logs, their reset for a retry, the attempts the
 * dispatcher logs (mongodb-delivery-store.ts, over the same collections) read
 * back, the retention step, and copying a store. Each member sends what
 * delivery-log-plans.ts decided, in the unit of work's transaction when
 * `session` is given (reads outside one pass none).
 */
import type { ClientSession, Db } from "mongodb";
import type {
  DeliveryLogReader,
  DeliveryLogRetention,
  DeliveryLogWriter,
  ExportedDelivery,
} from "../delivery-log.ts";
import {
  type AttemptDocument,
  attemptOf,
  attemptsByDelivery,
  type DeliveryDocument,
  deliveryOf,
  exportedAttemptOf,
} from "./delivery-documents.ts";
import {
  type AgedDelivery,
  agedPlan,
  attemptsPlan,
  deliveryFilter,
  exportPlan,
  importWrites,
  insertDeliveriesWrite,
  listPlan,
  pruneStep,
  resetWrite,
} from "./delivery-log-plans.ts";
import type { LogWrite } from "./log-operations.ts";
import { applyWrites, findAll, findOne, logCollections } from "./run-log-operations.ts";

/** The delivery log's members of a session on `db`, in the unit of work of `session` when given. */
export function createDeliveryLogSession(
  db: Db,
  session: ClientSession | null,
): DeliveryLogReader & DeliveryLogWriter & DeliveryLogRetention {
  const collections = logCollections(db);
  const write = (writes: readonly (LogWrite | null)[]) =>
    applyWrites(
      collections,
      writes.filter((w): w is LogWrite => w !== null),
      session,
    );
  const attemptsOfDeliveries = async (tenantId: string, ids: readonly string[]) => {
    const plan = attemptsPlan(tenantId, ids);
    return plan ? findAll<AttemptDocument>(collections.attempts, plan, session) : [];
  };

  return {
    async listDeliveries(tenantId, webhookId, query) {
      const plan = listPlan(tenantId, webhookId, query);
      if (plan === null) return [];
      return (await findAll<DeliveryDocument>(collections.deliveries, plan, session)).map(deliveryOf);
    },
    async findDelivery(tenantId, id) {
      const found = await findOne<DeliveryDocument>(
        collections.deliveries,
        deliveryFilter(tenantId, id),
        null,
        session,
      );
      return found ? deliveryOf(found) : null;
    },
    async listAttempts(tenantId, deliveryIds) {
      return attemptsByDelivery(await attemptsOfDeliveries(tenantId, deliveryIds), attemptOf);
    },
    insertDeliveries: (deliveries) => write([insertDeliveriesWrite(deliveries)]),
    resetDelivery: (tenantId, id, at) => write([resetWrite(tenantId, id, at)]),
    async pruneDeliveries(before, limit, after) {
      const plan = agedPlan(before, limit, after);
      if (plan === null) return { deleted: 0, next: null };
      const rows = await findAll<AgedDelivery>(collections.deliveries, plan, session);
      const { step, writes } = pruneStep(rows, before, limit);
      await write(writes);
      return step;
    },
    async exportDeliveries(tenantId, after, limit) {
      const plan = exportPlan(tenantId, after, limit);
      if (plan === null) return [];
      const deliveries = await findAll<DeliveryDocument>(collections.deliveries, plan, session);
      const attempts = attemptsByDelivery(
        await attemptsOfDeliveries(
          tenantId,
          deliveries.map((d) => d._id),
        ),
        exportedAttemptOf,
      );
      return deliveries.map(
        (d): ExportedDelivery => ({ delivery: deliveryOf(d), attempts: attempts.get(d._id) ?? [] }),
      );
    },
    importDeliveries: (exported) => write(importWrites(exported)),
  };
}
