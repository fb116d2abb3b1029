/**
 * The change log's retention step of a PostgreSQL session: deletes the entries
 * every reader has passed, a bounded step at a time (each step runs in its
 * caller's unit of work, so writers wait one step at most). The delivery log's
 * step is the log's own (common/delivery-log/postgres/delivery-log-session.ts).
 */

import type { Runner } from "../../../common/store/postgres/runner.ts";
import type { FeedCursor } from "../../model/record-values.ts";
import type { RetentionWriter } from "../ports/retention-port.ts";
import { decodeCursor, passedByAll } from "./feed-cursor.ts";

const SQL = {
  cursors: "SELECT cursor FROM feed_positions",
  // The entries every reader has passed, in each partition, oldest first.
  passed: `SELECT position, idx, committed_at FROM change_log
    WHERE (position, idx) <= (($1::int8[])[partition + 1], ($2::int4[])[partition + 1])
    ORDER BY position, idx LIMIT $3`,
  deleteChanges: `DELETE FROM change_log c USING unnest($1::int8[], $2::int4[]) AS d(position, idx)
    WHERE c.position = d.position AND c.idx = d.idx`,
};

export function createRetentionSession(db: Runner): Pick<RetentionWriter, "pruneChanges"> {
  return {
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
