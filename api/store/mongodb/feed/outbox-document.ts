/**
 * The outbox's documents (layout.ts, change_log) as stored and as the feed
 * reads them: one unit of work's change entries in, one document out, and
 * back. The entries are kept as the port gives them (JSON-shaped values
 * only, so BSON keeps them as they are).
 */
import { ObjectId, Timestamp } from "mongodb";
import type { ChangeEntry } from "../../../model/record-values.ts";
import type { OutboxDocument } from "./feed-events.ts";
import type { ClusterTime } from "./feed-position.ts";

/** An outbox document as stored. */
export interface StoredOutboxDocument {
  _id: ObjectId;
  /** The first entry's tenant (a unit of work writes for one tenant; one copying a store, importChanges, for several). */
  t: string;
  /** The unit's entries, but for the first `o` retention has deleted. */
  e: ChangeEntry[];
  /** How many `e` holds. */
  n: number;
  /** How many of the unit's first entries retention deleted (absent: none): `e[i]` is the unit's entry `o + i`. */
  o?: number;
  /** A cluster time the unit of work had seen before it wrote this: below its commit time. */
  lb: Timestamp;
  /** The commit time, once a feed reader stamped it (a fallback scan stamps its read time). */
  ct?: Timestamp | null;
  /**
   * The entries' commit time as the writer's clock saw it, ms (what retention compares): the
   * latest of them, so that an entry copied from another store (whose times differ) is never
   * deleted before its time.
   */
  at: number;
}

export const toTimestamp = (time: ClusterTime) => new Timestamp({ t: time.t, i: time.i });
export const fromTimestamp = (ts: Timestamp): ClusterTime => ({ t: ts.high >>> 0, i: ts.low >>> 0 });

/** The document a unit of work writes for its entries (at least one), `lb` the latest cluster time its session saw. */
export function newOutboxDocument(entries: readonly ChangeEntry[], lb: ClusterTime): StoredOutboxDocument {
  const first = entries[0];
  if (!first) throw new Error("an outbox document holds at least one entry");
  return {
    _id: new ObjectId(),
    t: first.tenantId,
    e: entries.map((entry) => ({ ...entry })),
    n: entries.length,
    lb: toTimestamp(lb),
    ct: null,
    at: entries.reduce((latest, entry) => Math.max(latest, entry.committedAt), first.committedAt),
  };
}

/** The feed's view of a stored outbox document. */
export function outboxDocumentOf(stored: StoredOutboxDocument): OutboxDocument {
  return {
    id: stored._id.toHexString(),
    entries: stored.e.map(({ requestId, ...entry }) =>
      requestId === null || requestId === undefined ? entry : { ...entry, requestId },
    ),
    lb: fromTimestamp(stored.lb),
    ct: stored.ct ? fromTimestamp(stored.ct) : null,
    from: stored.o ?? 0,
  };
}
