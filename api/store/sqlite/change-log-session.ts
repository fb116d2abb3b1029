/**
 * The change-log part of a SQLite session: the outbox mutations append to, and the feed readers'
 * saved positions, handed out as cursors (feed-cursor.ts). One partition: one writer commits one
 * unit of work at a time on one machine, so the whole log is in commit order and one reader reads
 * it; the port's partition is always 0.
 */
import type { Database } from "bun:sqlite";
import { BOUND_COUNT } from "../../../common/store/sqlite/bound-count.ts";
import type { ChangeEntry, LoggedChange, RecordValues } from "../../model/record-values.ts";
import type { ChangeLogReader, ChangeLogWriter } from "../ports/change-log-port.ts";
import { decodeCursor, encodeCursor, SQLITE_FEED_PARTITIONS, savedCursor } from "./feed-cursor.ts";

/** @throws RangeError for a partition other than the log's one. */
function assertPartition(partition: number): void {
  if (partition !== 0)
    throw new RangeError(`the SQLite store's change log has one partition, 0; not ${partition}`);
}

interface ChangeRow {
  position: number;
  tenant_id: string;
  object_name: string;
  operation: LoggedChange["operation"];
  uid: string;
  before: string | null;
  after: string | null;
  mutation_id: string;
  sequence: number;
  committed_at: number;
  request_id: string | null;
}

export function createChangeLogSession(db: Database): ChangeLogReader & ChangeLogWriter {
  const q = {
    append: db.query(
      `INSERT INTO change_log (tenant_id, object_name, operation, uid, before, after, mutation_id, sequence, committed_at, request_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    changes: db.query<ChangeRow, [number, number]>(
      `SELECT * FROM change_log WHERE position > ? ORDER BY position LIMIT ${BOUND_COUNT}`,
    ),
    // Both by the primary key, whatever the lag: positions are gapless (AUTOINCREMENT, rolled back with
    // their unit; retention deletes only from the start, behind every reader), so the head minus a
    // position counts the entries after it.
    lag: db.query<{ head: number | null; oldest: number | null }, [number]>(
      `SELECT (SELECT max(position) FROM change_log) AS head,
              (SELECT committed_at FROM change_log WHERE position > ?1 ORDER BY position LIMIT 1) AS oldest`,
    ),
    position: db.query<{ position: number }, [string]>("SELECT position FROM feed_positions WHERE name = ?"),
    // As retention judges it (retention-session.ts): no saved reader, nothing passed.
    passed: db.query<{ position: number | null }, []>("SELECT min(position) AS position FROM feed_positions"),
    setPosition: db.query(
      `INSERT INTO feed_positions (name, position, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at`,
    ),
  };

  return {
    feedPartitions: () => SQLITE_FEED_PARTITIONS,
    async readChanges(partition, after, limit) {
      assertPartition(partition);
      const entries = q.changes.all(decodeCursor(after), limit).map((row) => ({
        cursor: encodeCursor(row.position),
        tenantId: row.tenant_id,
        objectName: row.object_name,
        operation: row.operation,
        uid: row.uid,
        before: row.before === null ? null : (JSON.parse(row.before) as RecordValues),
        after: row.after === null ? null : (JSON.parse(row.after) as RecordValues),
        mutationId: row.mutation_id,
        sequence: row.sequence,
        committedAt: row.committed_at,
        ...(row.request_id === null ? {} : { requestId: row.request_id }),
      }));
      return { entries, next: entries.at(-1)?.cursor ?? after };
    },
    async changeLogLag(partition, after) {
      assertPartition(partition);
      const position = decodeCursor(after);
      const row = q.lag.get(position);
      const oldest = row?.oldest ?? null;
      return {
        changes: oldest === null ? 0 : Math.max(0, (row?.head ?? 0) - position),
        oldestCommittedAt: oldest,
      };
    },
    async feedPosition(name, partition) {
      assertPartition(partition);
      return savedCursor(q.position.get(name)?.position ?? 0);
    },
    async passedByAllReaders(partition) {
      assertPartition(partition);
      return savedCursor(q.passed.get()?.position ?? 0);
    },
    // One writer, positions in commit order: appending is all an import needs too.
    importChanges: (entries) => append(entries),
    appendChanges: (entries) => append(entries),
    async setFeedPosition(name, partition, position, at) {
      assertPartition(partition);
      q.setPosition.run(name, decodeCursor(position), at);
    },
  };

  async function append(entries: readonly ChangeEntry[]): Promise<void> {
    for (const entry of entries) {
      q.append.run(
        entry.tenantId,
        entry.objectName,
        entry.operation,
        entry.uid,
        entry.before === null ? null : JSON.stringify(entry.before),
        entry.after === null ? null : JSON.stringify(entry.after),
        entry.mutationId,
        entry.sequence,
        entry.committedAt,
        entry.requestId ?? null,
      );
    }
  }
}
