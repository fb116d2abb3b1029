/**
 * The retention part of a PostgreSQL session: deletes what the delivery log
 * and the change log no longer need to keep, a bounded step at a time (each
 * step runs in its caller's unit of work, so writers wait one step at most).
 */
import type { FeedCursor } from "../../model/record-values.ts";
import type { DeliveryAge, RetentionWriter } from "../ports/retention-port.ts";
import { decodeCursor, passedByAll } from "./feed-cursor.ts";
import type { Runner } from "./runner.ts";

const SQL = {
  // Along deliveries_by_age: only deliveries created before the cut-off are read.
  aged: `SELECT tenant_id, id, created_at, status, updated_at FROM deliveries
    WHERE (created_at, id) > ($1, $2) AND created_at < $3 ORDER BY created_at, id LIMIT $4`,
  deleteAttempts: `DELETE FROM delivery_attempts a USING unnest($1::text[], $2::text[]) AS d(tenant_id, id)
    WHERE a.tenant_id = d.tenant_id AND a.delivery_id = d.id`,
  deleteDeliveries: `DELETE FROM deliveries x USING unnest($1::text[], $2::text[]) AS d(tenant_id, id)
    WHERE x.tenant_id = d.tenant_id AND x.id = d.id`,
  cursors: "SELECT cursor FROM feed_positions",
  // The entries every reader has passed, in each partition, oldest first.
  passed: `SELECT position, idx, committed_at FROM change_log
    WHERE (position, idx) <= (($1::int8[])[partition + 1], ($2::int4[])[partition + 1])
    ORDER BY position, idx LIMIT $3`,
  deleteChanges: `DELETE FROM change_log c USING unnest($1::int8[], $2::int4[]) AS d(position, idx)
    WHERE c.position = d.position AND c.idx = d.idx`,
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

export function createRetentionSession(db: Runner): RetentionWriter {
  return {
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
    async pruneChanges(before, limit) {
      const saved = await db.rows<{ cursor: string }>(SQL.cursors);
      const passed = passedByAll(saved.map((row) => decodeCursor(row.cursor as FeedCursor)));
      const rows = await db.rows<{ position: string; idx: number; committed_at: string }>(SQL.passed, [
        passed.map((p) => String(p.ticket)),
        passed.map((p) => String(p.index)),
        limit,
      ]);
      // Commit order is time order: the old entries are a prefix, ending at the first recent one.
      const end = rows.findIndex((row) => Number(row.committed_at) >= before);
      const old = end === -1 ? rows : rows.slice(0, end);
      if (old.length > 0)
        await db.run(SQL.deleteChanges, [old.map((row) => row.position), old.map((row) => String(row.idx))]);
      return old.length;
    },
  };
}
