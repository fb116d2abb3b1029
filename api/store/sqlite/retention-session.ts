/**
 * The change log's retention step in a SQLite session: deletes the entries
 * every reader has passed, a bounded step at a time (each step runs in its
 * caller's unit of work, so the store's writers wait one step at most). The
 * delivery log's step is the delivery log's own
 * (common/delivery-log/sqlite/delivery-log-session.ts).
 */
import type { Database } from "bun:sqlite";
import type { RetentionWriter } from "../ports/retention-port.ts";

export function createRetentionSession(db: Database): Pick<RetentionWriter, "pruneChanges"> {
  const q = {
    // No reader yet: nothing has been passed.
    passed: db.query<{ position: number | null }, []>("SELECT min(position) AS position FROM feed_positions"),
    oldestChanges: db.query<{ position: number; committed_at: number }, [number, number]>(
      "SELECT position, committed_at FROM change_log WHERE position <= ? ORDER BY position LIMIT ?",
    ),
    deleteChanges: db.query("DELETE FROM change_log WHERE position <= ?"),
  };

  return {
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
