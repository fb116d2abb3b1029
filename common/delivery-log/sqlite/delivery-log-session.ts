/**
 * The delivery log over one SQLite connection, as the API's store uses it
 * (api/store/sqlite/sqlite-session.ts spreads it into every session): the
 * deliveries the change feed logs, their reset for a retry, the attempts the
 * dispatcher logs (through sqlite-delivery-store.ts, over the same tables)
 * read back, and the retention step that deletes finished ones. The two
 * tables' migrations are the engine's (common/store/sqlite/migrations.ts).
 */
import type { Database } from "bun:sqlite";
import { BOUND_COUNT } from "../../store/sqlite/bound-count.ts";
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

interface AgedDeliveryRow {
  tenant_id: string;
  id: string;
  created_at: number;
  status: DeliveryRecord["status"];
  updated_at: number;
}

/** Before every delivery in age order. */
const START: DeliveryAge = { createdAt: Number.NEGATIVE_INFINITY, id: "" };

/** The delivery log's reads, writes and retention step over `db` (writes and retention inside a unit of work). */
export function createDeliveryLogSession(
  db: Database,
): DeliveryLogReader & DeliveryLogWriter & DeliveryLogRetention {
  const q = {
    findDelivery: db.query<DeliveryRow, [string, string]>(
      "SELECT * FROM deliveries WHERE tenant_id = ? AND id = ?",
    ),
    insertDelivery: db.query(
      `INSERT INTO deliveries (tenant_id, id, webhook_id, event_id, part, status, body, test, attempts, committed_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    ),
    reset: db.query(
      "UPDATE deliveries SET status = 'pending', updated_at = ? WHERE tenant_id = ? AND id = ?",
    ),
    // Along deliveries_by_age: only deliveries created before the cut-off are read.
    aged: db.query<AgedDeliveryRow, [number, string, number, number]>(
      `SELECT tenant_id, id, created_at, status, updated_at FROM deliveries
       WHERE (created_at, id) > (?, ?) AND created_at < ?
       ORDER BY created_at, id LIMIT ?`,
    ),
    deleteAttempts: db.query("DELETE FROM delivery_attempts WHERE tenant_id = ? AND delivery_id = ?"),
    deleteDelivery: db.query("DELETE FROM deliveries WHERE tenant_id = ? AND id = ?"),
  };

  return {
    ...createDeliveryLogCopy(db),
    async listDeliveries(tenantId, webhookId, query) {
      const where = ["tenant_id = ?", "webhook_id = ?"];
      const params: (string | number)[] = [tenantId, webhookId];
      if (query.status) where.push("status = ?") && params.push(query.status);
      if (query.since !== undefined) where.push("created_at >= ?") && params.push(query.since);
      if (query.until !== undefined) where.push("created_at < ?") && params.push(query.until);
      if (query.before) {
        where.push("(created_at < ? OR (created_at = ? AND id < ?))");
        params.push(query.before.createdAt, query.before.createdAt, query.before.id);
      }
      const sql = `SELECT * FROM deliveries WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ${BOUND_COUNT}`;
      return db
        .query<DeliveryRow, (string | number)[]>(sql)
        .all(...params, query.limit)
        .map(deliveryOf);
    },
    findDelivery: async (tenantId, id) => {
      const row = q.findDelivery.get(tenantId, id);
      return row ? deliveryOf(row) : null;
    },
    async listAttempts(tenantId, deliveryIds) {
      const attempts = new Map<string, DeliveryAttempt[]>();
      if (deliveryIds.length === 0) return attempts;
      const marks = deliveryIds.map(() => "?").join(", ");
      const sql = `SELECT * FROM delivery_attempts WHERE tenant_id = ? AND delivery_id IN (${marks}) ORDER BY attempt`;
      for (const row of db.query<AttemptRow, string[]>(sql).all(tenantId, ...deliveryIds)) {
        attempts.set(row.delivery_id, [...(attempts.get(row.delivery_id) ?? []), attemptOf(row)]);
      }
      return attempts;
    },
    insertDeliveries: async (deliveries) => {
      for (const d of deliveries) {
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
      }
    },
    resetDelivery: async (tenantId, id, at) => {
      q.reset.run(at, tenantId, id);
    },
    async pruneDeliveries(before, limit, after) {
      const from = after ?? START;
      const rows = q.aged.all(from.createdAt, from.id, before, limit);
      let deleted = 0;
      for (const row of rows) {
        const finished = row.status === "succeeded" || row.status === "failed";
        if (!finished || row.updated_at >= before) continue;
        q.deleteAttempts.run(row.tenant_id, row.id);
        q.deleteDelivery.run(row.tenant_id, row.id);
        deleted++;
      }
      const last = rows[rows.length - 1];
      const next = rows.length < limit || !last ? null : { createdAt: last.created_at, id: last.id };
      return { deleted, next };
    },
  };
}
