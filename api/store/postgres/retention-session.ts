/**
 * The change log's retention step of a PostgreSQL session: deletes the entries
 * every reader has passed in their partition, a bounded step at a time (each
 * step runs in its caller's unit of work, so writers wait one step at most).
 * The delivery log's step is the log's own
 * (common/delivery-log/postgres/delivery-log-session.ts).
 */

import type { Runner } from "../../../common/store/postgres/runner.ts";
import type { RetentionWriter } from "../ports/retention-port.ts";
import { passedByAll } from "./feed-cursor.ts";

const SQL = {
  saved: "SELECT name, partition, ticket, idx FROM feed_positions",
  // The entries every reader has passed, in each partition, oldest first.
  passed: `SELECT position, idx, committed_at FROM change_log
    WHERE (position, idx) <= (($1::int8[])[partition + 1], ($2::int4[])[partition + 1])
    ORDER BY position, idx LIMIT $3`,
  deleteChanges: `DELETE FROM change_log c USING unnest($1::int8[], $2::int4[]) AS d(position, idx)
    WHERE c.position = d.position AND c.idx = d.idx`,
};

/** The retention step over `db`, on a log of `partitions`. */
export function createRetentionSession(
  db: Runner,
  partitions: number,
): Pick<RetentionWriter, "pruneChanges"> {
  return {
    async pruneChanges(before, limit) {
      const saved = await db.rows<{ name: string; partition: number; ticket: string; idx: number }>(
        SQL.saved,
      );
      const passed = passedByAll(
        partitions,
        saved.map((row) => ({
          name: row.name,
          partition: row.partition,
          ticket: Number(row.ticket),
          index: row.idx,
        })),
      );
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
