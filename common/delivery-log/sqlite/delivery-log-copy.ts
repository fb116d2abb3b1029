/**
 * The delivery log's part of copying a store, over one SQLite connection: a tenant's deliveries
 * read a page at a time in id order with all their attempts, and written back as they were
 * (statuses, counts, in-flight marks, the requests sent). Spread into the delivery-log session.
 */
import type { Database } from "bun:sqlite";
import { BOUND_COUNT } from "../../store/sqlite/bound-count.ts";
import type { DeliveryLogReader, DeliveryLogWriter, ExportedDelivery } from "../delivery-log.ts";
import { type AttemptRow, attemptOf, type DeliveryRow, deliveryOf } from "../delivery-rows.ts";

type CopyMembers = Pick<DeliveryLogReader, "exportDeliveries"> & Pick<DeliveryLogWriter, "importDeliveries">;

export function createDeliveryLogCopy(db: Database): CopyMembers {
  const q = {
    page: db.query<DeliveryRow, [string, string, number]>(
      `SELECT * FROM deliveries WHERE tenant_id = ? AND id > ? ORDER BY id LIMIT ${BOUND_COUNT}`,
    ),
    insertDelivery: db.query(
      `INSERT INTO deliveries (tenant_id, id, webhook_id, event_id, part, status, body, test, attempts, committed_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertAttempt: db.query(
      `INSERT INTO delivery_attempts
         (tenant_id, delivery_id, attempt, started_at, duration_ms, status_code, response_body, error, in_flight, request)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
  };

  return {
    async exportDeliveries(tenantId, after, limit) {
      const deliveries = q.page.all(tenantId, after ?? "", limit).map(deliveryOf);
      if (deliveries.length === 0) return [];
      const marks = deliveries.map(() => "?").join(", ");
      const rows = db
        .query<AttemptRow & { in_flight: number }, string[]>(
          `SELECT * FROM delivery_attempts WHERE tenant_id = ? AND delivery_id IN (${marks}) ORDER BY attempt`,
        )
        .all(tenantId, ...deliveries.map((d) => d.id));
      return deliveries.map(
        (d): ExportedDelivery => ({
          delivery: d,
          attempts: rows
            .filter((row) => row.delivery_id === d.id)
            .map((row) => ({ ...attemptOf(row), inFlight: row.in_flight === 1 })),
        }),
      );
    },
    async importDeliveries(deliveries) {
      for (const { delivery: d, attempts } of deliveries) {
        q.insertDelivery.run(
          d.tenantId,
          d.id,
          d.webhookId,
          d.eventId,
          d.part,
          d.status,
          d.body,
          d.test ? 1 : 0,
          d.attempts,
          d.committedAt,
          d.createdAt,
          d.updatedAt,
        );
        for (const a of attempts) {
          q.insertAttempt.run(
            d.tenantId,
            d.id,
            a.attempt,
            a.startedAt,
            a.durationMs,
            a.statusCode,
            a.responseBody,
            a.error,
            a.inFlight ? 1 : 0,
            a.request === null ? null : JSON.stringify(a.request),
          );
        }
      }
    },
  };
}
