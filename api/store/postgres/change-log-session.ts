/**
 * The change-log part of a PostgreSQL session: the outbox mutations append
 * to, kept in commit order per partition (feed-cursor.ts), and the feed
 * readers' saved cursors. A unit of work's entries are held until its end
 * (`ChangeLogUnit.flush`): then it locks its partition's `feed_locks` row
 * (FOR UPDATE: a lock, no new row version, so no serialization failure
 * between writers), takes one ticket from the sequence and writes its
 * entries under it. The next unit of the partition gets past the lock, and to
 * its ticket, only once this one has committed or rolled back: a reader that
 * sees a ticket sees every lower ticket of the partition that ever commits.
 * The lock is held from the unit's end to its commit, not for its whole run.
 * A NOTIFY in the same transaction wakes listeners once it commits (and never
 * if it rolls back); it is a hint, readers poll all the same.
 */

import type { Runner } from "../../../common/store/postgres/runner.ts";
import type { ChangeEntry, LoggedChange, RecordValues } from "../../model/record-values.ts";
import type { ChangeLogReader, ChangeLogWriter } from "../ports/change-log-port.ts";
import {
  type CursorPositions,
  decodeCursor,
  encodeCursor,
  type LogPosition,
  partitionOf,
  savedCursor,
} from "./feed-cursor.ts";

/** The channel a unit of work that appended changes notifies as it commits (payload: its partition). */
/** The channel each commit that appended to the change log notifies (postgres-store.ts listens on it). */
export const CHANGES_CHANNEL = "tds_change_log";

/** The statements (exported for the plan test: test/store/postgres/change-log-reads.test.ts). */
export const SQL = {
  // Each partition's entries past its position, read through the (partition, position, idx) index:
  // the first `limit` of each, merged in ticket order. The partition is compared in the row too, so
  // only that index serves the condition: with the primary key's, the planner (seeing most entries
  // in one partition) filtered every passed entry row by row. One bound for all partitions (the lowest
  // position) would rescan every entry a partition ahead has passed, on every read.
  changes: `SELECT c.* FROM unnest($1::int8[], $2::int4[]) WITH ORDINALITY AS p(ticket, idx, n)
    CROSS JOIN LATERAL (
      SELECT position, idx, partition, tenant_id, object_name, operation, uid, before, after,
        mutation_id, sequence, committed_at, request_id
      FROM change_log
      WHERE partition = p.n - 1 AND (partition, position, idx) > (p.n - 1, p.ticket, p.idx)
      ORDER BY partition, position, idx LIMIT $3
    ) c
    ORDER BY c.position, c.idx LIMIT $3`,
  // The backlog after a cursor: the entries past each partition's position, and the oldest commit time.
  lag: `SELECT coalesce(sum(c.changes), 0)::int8 AS changes, min(c.oldest) AS oldest
    FROM unnest($1::int8[], $2::int4[]) WITH ORDINALITY AS p(ticket, idx, n)
    CROSS JOIN LATERAL (
      SELECT count(*) AS changes, min(committed_at) AS oldest FROM change_log
      WHERE partition = p.n - 1 AND (partition, position, idx) > (p.n - 1, p.ticket, p.idx)
    ) c`,
  position: "SELECT cursor FROM feed_positions WHERE name = $1",
  setPosition: `INSERT INTO feed_positions (name, cursor, updated_at) VALUES ($1, $2, $3)
    ON CONFLICT (name) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`,
  lock: `SELECT pg_notify('${CHANGES_CHANNEL}', partition::text) FROM feed_locks WHERE partition = $1 FOR UPDATE`,
  // One ticket for the unit, taken after the lock (its own statement: in the lock's, nextval could
  // run before the row is locked); MATERIALIZED keeps it one value for every entry.
  append: `WITH t AS MATERIALIZED (SELECT nextval('change_log_positions') AS ticket)
    INSERT INTO change_log (position, idx, partition, tenant_id, object_name, operation, uid, before, after,
      mutation_id, sequence, committed_at, request_id)
    SELECT t.ticket, e.n - 1, $1, e.tenant_id, e.object_name, e.operation, e.uid, e.before, e.after,
      e.mutation_id, e.sequence, e.committed_at, e.request_id
    FROM t, unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
      $9::int4[], $10::int8[], $11::text[]) WITH ORDINALITY
      AS e(tenant_id, object_name, operation, uid, before, after, mutation_id, sequence, committed_at,
        request_id, n)`,
};

interface ChangeRow {
  position: string;
  idx: number;
  partition: number;
  tenant_id: string;
  object_name: string;
  operation: LoggedChange["operation"];
  uid: string;
  before: string | null;
  after: string | null;
  mutation_id: string;
  sequence: number;
  committed_at: string;
  request_id: string | null;
}

const parse = (json: string | null) => (json === null ? null : (JSON.parse(json) as RecordValues));

/** A unit of work's part of the change log: what it appended, written at its end. */
export interface ChangeLogUnit {
  /** Writes the entries appended, in commit order (see above); nothing when none were. */
  flush(): Promise<void>;
}

export function createChangeLogSession(
  db: Runner,
  unit: ChangeEntry[] | null,
): ChangeLogReader & ChangeLogWriter & ChangeLogUnit {
  return {
    async readChanges(after, limit) {
      const from = decodeCursor(after);
      const rows = await db.rows<ChangeRow>(SQL.changes, [
        from.map((p) => String(p.ticket)),
        from.map((p) => String(p.index)),
        limit,
      ]);
      const positions: LogPosition[] = [...from];
      const entries = rows.map((row): LoggedChange => {
        positions[row.partition] = { ticket: Number(row.position), index: row.idx };
        return {
          cursor: encodeCursor(positions as CursorPositions),
          tenantId: row.tenant_id,
          objectName: row.object_name,
          operation: row.operation,
          uid: row.uid,
          before: parse(row.before),
          after: parse(row.after),
          mutationId: row.mutation_id,
          sequence: row.sequence,
          committedAt: Number(row.committed_at),
          ...(row.request_id === null ? {} : { requestId: row.request_id }),
        };
      });
      return { entries, next: entries.at(-1)?.cursor ?? after };
    },
    async changeLogLag(after) {
      const from = decodeCursor(after);
      const [row] = await db.rows<{ changes: string; oldest: string | null }>(SQL.lag, [
        from.map((p) => String(p.ticket)),
        from.map((p) => String(p.index)),
      ]);
      return {
        changes: Number(row?.changes ?? 0),
        oldestCommittedAt: row?.oldest == null ? null : Number(row.oldest),
      };
    },
    async feedPosition(name) {
      const [row] = await db.rows<{ cursor: string }>(SQL.position, [name]);
      return row ? savedCursor(decodeCursor(row.cursor as LoggedChange["cursor"])) : null;
    },
    async appendChanges(entries) {
      if (unit === null) throw new Error("appendChanges runs inside a unit of work");
      unit.push(...entries);
    },
    async setFeedPosition(name, position, at) {
      await db.run(SQL.setPosition, [name, encodeCursor(decodeCursor(position)), at]);
    },
    async flush() {
      if (unit === null || unit.length === 0) return;
      const partition = partitionOf((unit[0] as ChangeEntry).tenantId);
      await db.run(SQL.lock, [partition]);
      const column = <T>(pick: (entry: ChangeEntry) => T) => unit.map(pick);
      const json = (values: RecordValues | null) => (values === null ? null : JSON.stringify(values));
      await db.run(SQL.append, [
        partition,
        column((e) => e.tenantId),
        column((e) => e.objectName),
        column((e) => e.operation),
        column((e) => e.uid),
        column((e) => json(e.before)),
        column((e) => json(e.after)),
        column((e) => e.mutationId),
        column((e) => String(e.sequence)),
        column((e) => String(e.committedAt)),
        column((e) => e.requestId ?? null),
      ]);
    },
  };
}
