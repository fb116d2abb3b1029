/**
 * The delivery log's part of copying a store, over one PostgreSQL runner: a tenant's deliveries
 * read a page at a time in id order with all their attempts, and written back as they were
 * (statuses, counts, in-flight marks, the requests sent), one statement per table for a page.
 * Spread into the delivery-log session.
 */
import type { Runner } from "../../store/postgres/runner.ts";
import type { DeliveryLogReader, DeliveryLogWriter, ExportedDelivery } from "../delivery-log.ts";
import { type AttemptRow, attemptOf, type DeliveryRow, deliveryOf } from "../delivery-rows.ts";

const SQL = {
  page: `SELECT tenant_id, id, webhook_id, event_id, part, status, body, test, attempts, committed_at,
      created_at, updated_at
    FROM deliveries WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
  attempts: `SELECT delivery_id, attempt, started_at, duration_ms, status_code, response_body, error, request,
      in_flight
    FROM delivery_attempts WHERE tenant_id = $1 AND delivery_id = ANY($2::text[]) ORDER BY delivery_id, attempt`,
  insertDeliveries: `INSERT INTO deliveries (tenant_id, id, webhook_id, event_id, part, status, body, test,
      attempts, committed_at, created_at, updated_at)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int4[], $6::text[], $7::text[],
      $8::bool[], $9::int4[], $10::int8[], $11::int8[], $12::int8[])`,
  insertAttempts: `INSERT INTO delivery_attempts (tenant_id, delivery_id, attempt, started_at, duration_ms,
      status_code, response_body, error, in_flight, request)
    SELECT * FROM unnest($1::text[], $2::text[], $3::int4[], $4::int8[], $5::int8[], $6::int4[], $7::text[],
      $8::text[], $9::bool[], $10::text[])`,
};

type CopyMembers = Pick<DeliveryLogReader, "exportDeliveries"> & Pick<DeliveryLogWriter, "importDeliveries">;

/** A column of values as text for an `unnest` of typed arrays (null stays null). */
const column = <T>(items: readonly T[], pick: (item: T) => string | number | boolean | null) =>
  items.map((item) => {
    const value = pick(item);
    return value === null ? null : String(value);
  });

export function createDeliveryLogCopy(db: Runner): CopyMembers {
  return {
    async exportDeliveries(tenantId, after, limit) {
      const rows = await db.rows<DeliveryRow>(SQL.page, [tenantId, after ?? "", limit]);
      if (rows.length === 0) return [];
      const deliveries = rows.map(deliveryOf);
      const attempts = await db.rows<AttemptRow & { in_flight: boolean }>(SQL.attempts, [
        tenantId,
        deliveries.map((d) => d.id),
      ]);
      return deliveries.map(
        (d): ExportedDelivery => ({
          delivery: d,
          attempts: attempts
            .filter((row) => row.delivery_id === d.id)
            .map((row) => ({ ...attemptOf(row), inFlight: row.in_flight })),
        }),
      );
    },
    async importDeliveries(exported) {
      if (exported.length === 0) return;
      const deliveries = exported.map((e) => e.delivery);
      await db.run(SQL.insertDeliveries, [
        column(deliveries, (d) => d.tenantId),
        column(deliveries, (d) => d.id),
        column(deliveries, (d) => d.webhookId),
        column(deliveries, (d) => d.eventId),
        column(deliveries, (d) => d.part),
        column(deliveries, (d) => d.status),
        column(deliveries, (d) => d.body),
        column(deliveries, (d) => d.test),
        column(deliveries, (d) => d.attempts),
        column(deliveries, (d) => d.committedAt),
        column(deliveries, (d) => d.createdAt),
        column(deliveries, (d) => d.updatedAt),
      ]);
      const attempts = exported.flatMap(({ delivery: d, attempts: list }) => list.map((a) => ({ d, a })));
      if (attempts.length === 0) return;
      await db.run(SQL.insertAttempts, [
        column(attempts, ({ d }) => d.tenantId),
        column(attempts, ({ d }) => d.id),
        column(attempts, ({ a }) => a.attempt),
        column(attempts, ({ a }) => a.startedAt),
        column(attempts, ({ a }) => a.durationMs),
        column(attempts, ({ a }) => a.statusCode),
        column(attempts, ({ a }) => a.responseBody),
        column(attempts, ({ a }) => a.error),
        column(attempts, ({ a }) => a.inFlight),
        column(attempts, ({ a }) => (a.request === null ? null : JSON.stringify(a.request))),
      ]);
    },
  };
}
