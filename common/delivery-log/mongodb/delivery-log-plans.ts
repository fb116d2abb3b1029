/**
 * The API's members of the delivery log on MongoDB, decided: a port call's
 * arguments in, the reads and writes that answer it out (log-operations.ts),
 * and the rows read back into the port's answer. Pure: the driver calls are
 * delivery-log-session.ts's, which sends these as they are.
 */
import type { Document } from "mongodb";
import type {
  DeliveryAge,
  DeliveryPruneStep,
  DeliveryQuery,
  DeliveryRecord,
  ExportedDelivery,
} from "../delivery-log.ts";
import {
  attemptDocumentOf,
  attemptRange,
  attemptsOf,
  type DeliveryDocument,
  deliveryDocumentOf,
} from "./delivery-documents.ts";
import type { FindPlan, LogWrite } from "./log-operations.ts";

/** Newest first, the id breaking ties (delivery_list's order). */
const NEWEST_FIRST = { createdAt: -1, _id: -1 } as const;
/** Oldest first, the id breaking ties (delivery_age's order). */
const OLDEST_FIRST = { createdAt: 1, _id: 1 } as const;

/** Before, or after, a place in (createdAt, id) order: the keyset condition of a page. */
function beyond(direction: "$lt" | "$gt", place: DeliveryAge): Document {
  return {
    $or: [
      { createdAt: { [direction]: place.createdAt } },
      { createdAt: place.createdAt, _id: { [direction]: place.id } },
    ],
  };
}

/** A webhook's deliveries matching `query`, newest first; null when `limit` asks for none (MongoDB reads a limit of 0 as none). */
export function listPlan(tenantId: string, webhookId: string, query: DeliveryQuery): FindPlan | null {
  if (query.limit <= 0) return null;
  const filter: Document = { t: tenantId, webhookId };
  if (query.status) filter.status = query.status;
  const created: Document = {};
  if (query.since !== undefined) created.$gte = query.since;
  if (query.until !== undefined) created.$lt = query.until;
  if (Object.keys(created).length > 0) filter.createdAt = created;
  if (query.before) Object.assign(filter, beyond("$lt", query.before));
  return { filter, sort: NEWEST_FIRST, limit: query.limit };
}

/** The tenant's delivery with this id (another tenant's never). */
export const deliveryFilter = (tenantId: string, id: string): Document => ({ _id: id, t: tenantId });

/** The tenant's attempts of these deliveries, in delivery then attempt order; null for no delivery (`$or` needs one). */
export function attemptsPlan(tenantId: string, deliveryIds: readonly string[]): FindPlan | null {
  if (deliveryIds.length === 0) return null;
  return { filter: attemptsOf(tenantId, deliveryIds), sort: { _id: 1 } };
}

/**
 * Each delivery inserted unless one of its tenant, webhook, event and part is logged (delivery_event's
 * key): an upsert on that key that sets the rest only when it inserts, so a batch the change feed
 * logs again writes nothing, and no duplicate-key error aborts the transaction (MongoDB aborts a
 * transaction on any write error, so an insert that fails on a duplicate cannot be let pass).
 */
export function insertDeliveriesWrite(deliveries: readonly DeliveryRecord[]): LogWrite | null {
  if (deliveries.length === 0) return null;
  const entries = deliveries.map((record) => {
    const { t, webhookId, eventId, part, ...rest } = deliveryDocumentOf(record);
    return { filter: { t, webhookId, eventId, part }, onInsert: rest };
  });
  return { kind: "insertIfAbsent", collection: "deliveries", entries };
}

/** The delivery set back to pending at `at` (none written when the tenant has no such delivery). */
export function resetWrite(tenantId: string, id: string, at: number): LogWrite {
  return {
    kind: "update",
    collection: "deliveries",
    filter: deliveryFilter(tenantId, id),
    update: { $set: { status: "pending", updatedAt: at } },
    many: false,
  };
}

/** What a prune step reads of a delivery. */
export type AgedDelivery = Pick<DeliveryDocument, "_id" | "t" | "createdAt" | "status" | "updatedAt">;

/**
 * The next `limit` deliveries of every tenant created before `before`, oldest first, after `after`
 * (the start when null); null when `limit` asks for none.
 */
export function agedPlan(before: number, limit: number, after: DeliveryAge | null): FindPlan | null {
  if (limit <= 0) return null;
  const filter: Document = { createdAt: { $lt: before } };
  if (after) Object.assign(filter, beyond("$gt", after));
  return {
    filter,
    sort: OLDEST_FIRST,
    limit,
    projection: { _id: 1, t: 1, createdAt: 1, status: 1, updatedAt: 1 },
  };
}

/**
 * One prune step from the deliveries `agedPlan` read: those finished and unchanged since `before`
 * are deleted with their attempts; the step goes on after the last one read, unless fewer than
 * `limit` came (none is left to look at). The writes run in the step's unit of work, whose snapshot
 * the read was: a dispatcher's write to one of them meanwhile is a write conflict, and the step runs again.
 */
export function pruneStep(
  rows: readonly AgedDelivery[],
  before: number,
  limit: number,
): { step: DeliveryPruneStep; writes: LogWrite[] } {
  const gone = rows.filter(
    (row) => (row.status === "succeeded" || row.status === "failed") && row.updatedAt < before,
  );
  const last = rows.at(-1);
  const next = rows.length < limit || !last ? null : { createdAt: last.createdAt, id: last._id };
  const writes: LogWrite[] =
    gone.length === 0
      ? []
      : [
          {
            kind: "delete",
            collection: "attempts",
            filter: {
              $or: gone.map((row) => ({
                t: row.t,
                _id: attemptRange(row._id),
              })),
            },
          },
          {
            kind: "delete",
            collection: "deliveries",
            filter: { _id: { $in: gone.map((row) => row._id) } },
          },
        ];
  return { step: { deleted: gone.length, next }, writes };
}

/** A page of the tenant's deliveries in id order (code points: MongoDB compares strings by their UTF-8 bytes), after `after`. */
export function exportPlan(tenantId: string, after: string | null, limit: number): FindPlan | null {
  if (limit <= 0) return null;
  const filter: Document = after === null ? { t: tenantId } : { t: tenantId, _id: { $gt: after } };
  return { filter, sort: { _id: 1 }, limit };
}

/** Copied deliveries and their attempts inserted as they were; a delivery or key the log holds is a duplicate key. */
export function importWrites(exported: readonly ExportedDelivery[]): LogWrite[] {
  if (exported.length === 0) return [];
  const writes: LogWrite[] = [
    {
      kind: "insert",
      collection: "deliveries",
      documents: exported.map((e) => deliveryDocumentOf(e.delivery)),
    },
  ];
  const attempts = exported.flatMap(({ delivery, attempts: list }) =>
    list.map((attempt) => attemptDocumentOf(delivery.tenantId, delivery.id, attempt)),
  );
  if (attempts.length > 0) writes.push({ kind: "insert", collection: "attempts", documents: attempts });
  return writes;
}
