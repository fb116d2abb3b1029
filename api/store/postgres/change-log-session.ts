/**
 * The change-log part of a PostgreSQL session: the outbox mutations append
 * to, kept in commit order per partition (feed-cursor.ts), and the feed
 * readers' saved positions, one row per reader and partition. A unit of
 * work's entries are held until its end (`ChangeLogUnit.flush`): then it
 * locks its partition's `feed_locks` row (FOR UPDATE: a lock, no new row
 * version, so no serialization failure between writers), takes one ticket
 * from the sequence and writes its entries under it. The next unit of the
 * partition gets past the lock, and to its ticket, only once this one has
 * committed or rolled back: a reader that sees a ticket sees every lower
 * ticket of the partition that ever commits. The lock is held from the
 * unit's end to its commit, not for its whole run. A NOTIFY in the same
 * transaction, its payload the partition, wakes that partition's reader
 * wherever it runs once the unit commits (and never if it rolls back); it is
 * a hint, readers poll all the same.
 */

import type { Runner } from "../../../common/store/postgres/runner.ts";
import type { ChangeEntry, LoggedChange, RecordValues } from "../../model/record-values.ts";
import { partitionOfTenant } from "../feed-partitions.ts";
import type { ChangeLogReader, ChangeLogWriter } from "../ports/change-log-port.ts";
import { assertPartition, decodeCursor, encodeCursor, passedByAll, savedCursor } from "./feed-cursor.ts";

/** The channel each commit that appended to the change log notifies, its partition the payload (postgres-store.ts listens). */
export const CHANGES_CHANNEL = "tds_change_log";

/** The statements (exported for the plan test: test/store/postgres/change-log-reads.test.ts). */
export const SQL = {
  // By the index on (partition, position, idx): the partition's entries after the cursor, in commit
  // order. The partition is compared in the row too, so that only that index can serve the
  // condition whatever the statistics say: a read over all partitions with one bound (before reads
  // went by partition) had the planner take the primary key's order and filter out every entry the
  // reader had passed (0.7 s a read at 400k entries, starving the bench's API after a load). The
  // partition's end is `partition <= $1`, not `partition = $1`: beside an equality on the index's
  // first column, PostgreSQL 15 starts the scan at the partition's first entry and steps over every
  // passed one (19.6 ms a poll at 400k entries; 0.05 ms so).
  changes: `SELECT position, idx, tenant_id, object_name, operation, uid, before, after,
      mutation_id, sequence, committed_at, request_id
    FROM change_log
    WHERE (partition, position, idx) > ($1, $2, $3) AND partition <= $1
    ORDER BY partition, position, idx LIMIT $4`,
  // The partition's backlog after a cursor, and the oldest commit time in it.
  lag: `SELECT count(*)::int8 AS changes, min(committed_at) AS oldest
    FROM change_log WHERE (partition, position, idx) > ($1, $2, $3) AND partition <= $1`,
  position: "SELECT ticket, idx FROM feed_positions WHERE name = $1 AND partition = $2",
  setPosition: `INSERT INTO feed_positions (name, partition, ticket, idx, updated_at) VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (name, partition) DO UPDATE
      SET ticket = excluded.ticket, idx = excluded.idx, updated_at = excluded.updated_at`,
  // Every reader's saved position in every partition (retention judges what they passed alike).
  saved: "SELECT name, partition, ticket, idx FROM feed_positions",
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

/** The session over `db`; `unit` holds a unit of work's appended entries (null outside one); the log has `partitions`. */
export function createChangeLogSession(
  db: Runner,
  unit: ChangeEntry[] | null,
  partitions: number,
): ChangeLogReader & ChangeLogWriter & ChangeLogUnit {
  /** The partition's position a cursor stands for, as the statements bind it. */
  const bound = (partition: number, after: LoggedChange["cursor"] | null) => {
    assertPartition(partition, partitions);
    const { ticket, index } = decodeCursor(partition, after);
    return [partition, String(ticket), index] as const;
  };
  /**
   * Writes `entries` (all of `partition`'s tenants) under one ticket, after the partition's lock:
   * both statements sent at once (pipelined on a unit's connection) and run by the server in
   * order, one round trip where the lock used to wait for this process between them.
   */
  const write = async (partition: number, entries: readonly ChangeEntry[]) => {
    const column = <T>(pick: (entry: ChangeEntry) => T) => entries.map(pick);
    const json = (values: RecordValues | null) => (values === null ? null : JSON.stringify(values));
    const [locked] = await Promise.all([
      db.run(SQL.lock, [partition]),
      db.run(SQL.append, [
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
      ]),
    ]);
    // No lock row, no order: the store's partitions are settled before any unit runs (feed-partitions.ts).
    if (locked !== 1) throw new Error(`the change log's partition ${partition} has no lock row (feed_locks)`);
  };

  return {
    feedPartitions: () => partitions,
    async readChanges(partition, after, limit) {
      const rows = await db.rows<ChangeRow>(SQL.changes, [...bound(partition, after), limit]);
      const entries = rows.map(
        (row): LoggedChange => ({
          cursor: encodeCursor(partition, { ticket: Number(row.position), index: row.idx }),
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
        }),
      );
      return { entries, next: entries.at(-1)?.cursor ?? after };
    },
    async changeLogLag(partition, after) {
      const [row] = await db.rows<{ changes: string; oldest: string | null }>(
        SQL.lag,
        bound(partition, after),
      );
      return {
        changes: Number(row?.changes ?? 0),
        oldestCommittedAt: row?.oldest == null ? null : Number(row.oldest),
      };
    },
    async feedPosition(name, partition) {
      assertPartition(partition, partitions);
      const [row] = await db.rows<{ ticket: string; idx: number }>(SQL.position, [name, partition]);
      return row ? savedCursor(partition, { ticket: Number(row.ticket), index: row.idx }) : null;
    },
    async appendChanges(entries) {
      if (unit === null) throw new Error("appendChanges runs inside a unit of work");
      const tenantId = (unit[0] ?? entries[0])?.tenantId;
      if (entries.some((entry) => entry.tenantId !== tenantId))
        throw new Error("a unit of work appends the change-log entries of one tenant only");
      unit.push(...entries);
    },
    async setFeedPosition(name, partition, position, at) {
      const [, ticket, index] = bound(partition, position);
      await db.run(SQL.setPosition, [name, partition, ticket, index, at]);
    },
    async passedByAllReaders(partition) {
      assertPartition(partition, partitions);
      const saved = await db.rows<{ name: string; partition: number; ticket: string; idx: number }>(
        SQL.saved,
      );
      const passed = passedByAll(
        partitions,
        saved.map((row) => ({ ...row, ticket: Number(row.ticket), index: row.idx })),
      );
      return savedCursor(partition, passed[partition] ?? { ticket: 0, index: 0 });
    },
    async importChanges(entries) {
      // Each run of entries of one partition under a ticket of its own: every tenant's entries go to
      // its partition, in the order given, as its own units of work would have written them.
      const partitionOf = (entry: ChangeEntry) => partitionOfTenant(entry.tenantId, partitions);
      let start = 0;
      while (start < entries.length) {
        const partition = partitionOf(entries[start] as ChangeEntry);
        let end = start + 1;
        while (end < entries.length && partitionOf(entries[end] as ChangeEntry) === partition) end++;
        await write(partition, entries.slice(start, end));
        start = end;
      }
    },
    async flush() {
      if (unit === null || unit.length === 0) return;
      await write(partitionOfTenant((unit[0] as ChangeEntry).tenantId, partitions), unit);
    },
  };
}
