/**
 * The delivery log over one PostgreSQL runner, as the API's store uses it
 * (api/store/postgres/postgres-session.ts spreads it into every session): the
 * deliveries the change feed logs, their reset for a retry, the attempts the
 * dispatcher logs (through postgres-delivery-store.ts, over the same tables)
 * read back, and the retention step that deletes finished ones. The tables'
 * migrations are the engine's (common/store/postgres/migrations.ts).
 */
import type { BoundValue, Runner } from "../../store/postgres/runner.ts";
import type {
  DeliveryAge,
  DeliveryAttempt,
  DeliveryLogReader,
  DeliveryLogRetention,
  DeliveryLogWriter,
  DeliveryRecord,
} from "../delivery-log.ts";
import { type AttemptRow, attemptOf, type DeliveryRow, deliveryOf } from "../delivery-rows.ts";
import { createDeliveryLogCopy } from "./delivery-log-copy.ts";

const COLUMNS = `tenant_id, id, webhook_id, event_id, part, status, body, test, attempts, committed_at,
  created_at, updated_at`;
const SQL = {
  find: `SELECT ${COLUMNS} FROM deliveries WHERE tenant_id = $1 AND id = $2`,
  attempts: `SELECT delivery_id, attempt, started_at, duration_ms, status_code, response_body, error, request
    FROM delivery_attempts WHERE tenant_id = $1 AND delivery_id = ANY($2::text[]) ORDER BY delivery_id, attempt`,
  // One statement for the batch; a delivery logged already (webhook × event × part) is left as it is.
  insert: `INSERT INTO deliveries (${COLUMNS})
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int4[], $6::text[], $7::text[],
      $8::bool[], $9::int4[], $10::int8[], $11::int8[], $12::int8[])
    ON CONFLICT DO NOTHING`,
  reset: "UPDATE deliveries SET status = 'pending', updated_at = $1 WHERE tenant_id = $2 AND id = $3",
  // Along deliveries_by_age: only deliveries created before the cut-off are read.
  aged: `SELECT tenant_id, id, created_at, status, updated_at FROM deliveries
    WHERE (created_at, id) > ($1, $2) AND created_at < $3 ORDER BY created_at, id LIMIT $4`,
  deleteAttempts: `DELETE FROM delivery_attempts a USING unnest($1::text[], $2::text[]) AS d(tenant_id, id)
    WHERE a.tenant_id = d.tenant_id AND a.delivery_id = d.id`,
  deleteDeliveries: `DELETE FROM deliveries x USING unnest($1::text[], $2::text[]) AS d(tenant_id, id)
    WHERE x.tenant_id = d.tenant_id AND x.id = d.id`,
};

interface AgedRow {
  tenant_id: string;
  id: string;
  created_at: string;
  status: string;
  updated_at: string;
}

/** Before every delivery: no creation time is below it, and "" sorts before every id. */
const START = { createdAt: Number.MIN_SAFE_INTEGER, id: "" };

/** The delivery log's members of a session over `db` (the pool's, or a unit of work's transaction). */
export function createDeliveryLogSession(
  db: Runner,
): DeliveryLogReader & DeliveryLogWriter & DeliveryLogRetention {
  return {
    ...createDeliveryLogCopy(db),
    async listDeliveries(tenantId, webhookId, query) {
      const where = ["tenant_id = $1", "webhook_id = $2"];
      const params: BoundValue[] = [tenantId, webhookId];
      const bind = (value: BoundValue) => `$${params.push(value)}`;
      if (query.status) where.push(`status = ${bind(query.status)}`);
      if (query.since !== undefined) where.push(`created_at >= ${bind(query.since)}`);
      if (query.until !== undefined) where.push(`created_at < ${bind(query.until)}`);
      if (query.before)
        where.push(`(created_at, id) < (${bind(query.before.createdAt)}, ${bind(query.before.id)})`);
      const sql = `SELECT ${COLUMNS} FROM deliveries WHERE ${where.join(" AND ")}
        ORDER BY created_at DESC, id DESC LIMIT ${bind(query.limit)}`;
      return (await db.rows<DeliveryRow>(sql, params)).map(deliveryOf);
    },
    async findDelivery(tenantId, id) {
      const [row] = await db.rows<DeliveryRow>(SQL.find, [tenantId, id]);
      return row ? deliveryOf(row) : null;
    },
    async listAttempts(tenantId, deliveryIds) {
      const attempts = new Map<string, DeliveryAttempt[]>();
      if (deliveryIds.length === 0) return attempts;
      for (const row of await db.rows<AttemptRow>(SQL.attempts, [tenantId, deliveryIds])) {
        const list = attempts.get(row.delivery_id) ?? [];
        list.push(attemptOf(row));
        attempts.set(row.delivery_id, list);
      }
      return attempts;
    },
    async insertDeliveries(deliveries) {
      if (deliveries.length === 0) return;
      const column = (pick: (d: DeliveryRecord) => string | number | boolean) =>
        deliveries.map((d) => String(pick(d)));
      await db.run(SQL.insert, [
        column((d) => d.tenantId),
        column((d) => d.id),
        column((d) => d.webhookId),
        column((d) => d.eventId),
        column((d) => d.part),
        column((d) => d.status),
        column((d) => d.body),
        column((d) => d.test),
        column((d) => d.attempts),
        column((d) => d.committedAt),
        column((d) => d.createdAt),
        column((d) => d.updatedAt),
      ]);
    },
    async resetDelivery(tenantId, id, at) {
      await db.run(SQL.reset, [at, tenantId, id]);
    },
    async pruneDeliveries(before, limit, after) {
      const from = after ?? START;
      const rows = await db.rows<AgedRow>(SQL.aged, [from.createdAt, from.id, before, limit]);
      const gone = rows.filter(
        (row) => (row.status === "succeeded" || row.status === "failed") && Number(row.updated_at) < before,
      );
      if (gone.length > 0) {
        const keys = [gone.map((row) => row.tenant_id), gone.map((row) => row.id)];
        await db.run(SQL.deleteAttempts, keys);
        await db.run(SQL.deleteDeliveries, keys);
      }
      const last = rows.at(-1);
      const next: DeliveryAge | null =
        rows.length < limit || !last ? null : { createdAt: Number(last.created_at), id: last.id };
      return { deleted: gone.length, next };
    },
  };
}
