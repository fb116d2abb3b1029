/**
 * The change-log part of a SQLite session: the outbox mutations append to, and the feed readers'
 * saved positions, handed out as cursors (feed-cursor.ts).
 */
import type { Database } from "bun:sqlite";
import type { LoggedChange, RecordValues } from "../../model/record-values.ts";
import type { ChangeLogReader, ChangeLogWriter } from "../ports/change-log-port.ts";
import { decodeCursor, encodeCursor, savedCursor } from "./feed-cursor.ts";
import { BOUND_COUNT } from "./record-codec.ts";

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
}

export function createChangeLogSession(db: Database): ChangeLogReader & ChangeLogWriter {
  const q = {
    append: db.query(
      `INSERT INTO change_log (tenant_id, object_name, operation, uid, before, after, mutation_id, sequence, committed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    changes: db.query<ChangeRow, [number, number]>(
      `SELECT * FROM change_log WHERE position > ? ORDER BY position LIMIT ${BOUND_COUNT}`,
    ),
    position: db.query<{ position: number }, [string]>("SELECT position FROM feed_positions WHERE name = ?"),
    setPosition: db.query(
      `INSERT INTO feed_positions (name, position, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at`,
    ),
  };

  return {
    async readChanges(after, limit) {
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
      }));
      return { entries, next: entries.at(-1)?.cursor ?? after };
    },
    feedPosition: async (name) => savedCursor(q.position.get(name)?.position ?? 0),
    async appendChanges(entries) {
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
        );
      }
    },
    setFeedPosition: async (name, position, at) => {
      q.setPosition.run(name, decodeCursor(position), at);
    },
  };
}
