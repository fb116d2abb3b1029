/**
 * The retention part of a SQLite session: deletes what the delivery log and
 * the change log no longer need to keep, a bounded step at a time (each step
 * runs in its caller's unit of work, so the store's writers wait one step at most).
 */
import type { Database } from "bun:sqlite";
import type { DeliveryAge, RetentionWriter } from "../ports/retention-port.ts";

interface AgedDeliveryRow {
  tenant_id: string;
  id: string;
  created_at: number;
  status: string;
  updated_at: number;
}

const START: DeliveryAge = { createdAt: Number.NEGATIVE_INFINITY, id: "" };

export function createRetentionSession(db: Database): RetentionWriter {
  const q = {
    // Along deliveries_by_age: only deliveries created before the cut-off are read.
    aged: db.query<AgedDeliveryRow, [number, string, number, number]>(
      `SELECT tenant_id, id, created_at, status, updated_at FROM deliveries
       WHERE (created_at, id) > (?, ?) AND created_at < ?
       ORDER BY created_at, id LIMIT ?`,
    ),
    deleteAttempts: db.query("DELETE FROM delivery_attempts WHERE tenant_id = ? AND delivery_id = ?"),
    deleteDelivery: db.query("DELETE FROM deliveries WHERE tenant_id = ? AND id = ?"),
    // No reader yet: nothing has been passed.
    passed: db.query<{ position: number | null }, []>("SELECT min(position) AS position FROM feed_positions"),
    oldestChanges: db.query<{ position: number; committed_at: number }, [number, number]>(
      "SELECT position, committed_at FROM change_log WHERE position <= ? ORDER BY position LIMIT ?",
    ),
    deleteChanges: db.query("DELETE FROM change_log WHERE position <= ?"),
  };

  return {
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
    async pruneChanges(before, limit) {
      const passed = q.passed.get()?.position ?? null;
      if (passed === null) return 0;
      // Commit order is time order: the old entries are a prefix, ending at the first recent one.
      let end: number | null = null;
      let count = 0;
      for (const row of q.oldestChanges.all(passed, limit)) {
        if (row.committed_at >= before) break;
        end = row.position;
        count++;
      }
      if (end !== null) q.deleteChanges.run(end);
      return count;
    },
  };
}
