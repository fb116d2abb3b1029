/**
 * The MongoDB engine's change log replayed without a server: the outbox's
 * documents as the engine writes them (newOutboxDocument) in a mingo
 * collection (mingo-collection.ts: an independent interpreter of the query
 * language, through the driver's BSON; mingo-timestamps.ts: Timestamps
 * ordered as the server orders them), the feed's machine stepped by the
 * shell's own loop (answerRead), and every decision the engine's pure code's:
 * the scan pages' filter, order and key (scan-page.ts), the stamps' update,
 * the readers' passed places and the lag's pipeline (readers-passed.ts),
 * retention's filter and plan (prune-plan.ts). What this file adds is only what a replica set would
 * do: a cluster clock (each unit of work commits one tick after the time its
 * session had seen), the change stream's events (the inserts committed after
 * where it was opened, in commit order), and a scan's snapshot (pages of one
 * scan read the outbox as it was at the scan's read time).
 *
 * Not proven here: indexes, transactions, concurrency, the driver's calls
 * themselves (change-stream-feed.ts, change-log-session.ts), only the
 * documents they send. The conformance suite proves those, on a server
 * (MONGODB_TEST_URL).
 */
import type { ChangeEntry, FeedCursor, LoggedChange } from "../../../api/model/record-values.ts";
import { answerRead, type OutsideAction } from "../../../api/store/mongodb/feed/answer-read.ts";
import type { FeedEvent, StreamEvent } from "../../../api/store/mongodb/feed/feed-events.ts";
import { CLOSED, type FeedState, step } from "../../../api/store/mongodb/feed/feed-machine.ts";
import {
  type ClusterTime,
  compareTimes,
  decodePosition,
  encodePosition,
  type ResumePoint,
} from "../../../api/store/mongodb/feed/feed-position.ts";
import {
  fromTimestamp,
  newOutboxDocument,
  outboxDocumentOf,
  type StoredOutboxDocument,
  toTimestamp,
} from "../../../api/store/mongodb/feed/outbox-document.ts";
import { planPrune, pruneCandidates } from "../../../api/store/mongodb/feed/prune-plan.ts";
import { lagPipeline, passedByAll } from "../../../api/store/mongodb/feed/readers-passed.ts";
import { nextScanKey, scanPageFilter, scanPageSort } from "../../../api/store/mongodb/feed/scan-page.ts";
import type { ChangePage } from "../../../api/store/ports/change-log-port.ts";
import { TimestampedCollection } from "./mingo-timestamps.ts";

/** A replica set's view of one outbox document: when its transaction committed (and the token the stream shows). */
interface Committed {
  id: string;
  ts: ClusterTime;
}

export interface ReplayOptions {
  /** Outbox documents per scan page (the shell's default: 500). */
  scanPage?: number;
}

/** A change log of the engine's documents over mingo, read and pruned as the engine's members do. */
export function replayedChangeLog(options: ReplayOptions = {}) {
  const page = options.scanPage ?? 500;
  const outbox = new TimestampedCollection();
  const saved = new Map<string, FeedCursor | null>();
  const commits: Committed[] = [];
  const snapshots = new Map<string, TimestampedCollection>();
  let clock = 100;
  const holder: { state: FeedState } = { state: CLOSED };
  /** The open stream: what it has shown, and where it was opened. */
  let stream: { from: ResumePoint; shown: Set<string> } | null = null;

  const tokenOf = (c: Committed) => `82${c.ts.t.toString(16).padStart(8, "0")}${c.id.slice(-8)}`;
  const now = (): ClusterTime => ({ t: clock, i: 1 });
  const docs = () => outbox.all() as StoredOutboxDocument[];

  const opensBefore = (from: ResumePoint, c: Committed): boolean => {
    if ("startAtOperationTime" in from) return compareTimes(c.ts, from.startAtOperationTime) >= 0;
    const opened = commits.find((other) => tokenOf(other) === from.startAfter);
    if (!opened) throw new Error("the stream was opened after a token no event had");
    return compareTimes(c.ts, opened.ts) > 0;
  };

  const pull = (max: number): FeedEvent => {
    if (stream === null) throw new Error("a pull on a closed stream");
    const open = stream;
    const events: StreamEvent[] = [];
    for (const c of commits) {
      if (events.length >= max) break;
      if (open.shown.has(c.id) || !opensBefore(open.from, c)) continue;
      const stored = docs().find((doc) => doc._id.toHexString() === c.id);
      open.shown.add(c.id);
      // The stream shows the insert as it was inserted, not stamped (a deleted one still shows).
      if (stored)
        events.push({ token: tokenOf(c), ts: c.ts, doc: { ...outboxDocumentOf(stored), ct: null } });
    }
    return { type: "received", events };
  };

  const scan = (request: Parameters<typeof scanPageFilter>[0]): FeedEvent => {
    const readAt = request.readAt ?? now();
    const key = `${readAt.t}.${readAt.i}`;
    // One snapshot per scan: what later pages read is the outbox as it was at the read time.
    if (!snapshots.has(key)) snapshots.set(key, new TimestampedCollection(outbox.all()));
    const snapshot = snapshots.get(key) as TimestampedCollection;
    const stored = snapshot
      .find(scanPageFilter(request), { sort: scanPageSort(request) })
      .slice(0, page) as StoredOutboxDocument[];
    return {
      type: "scanned",
      docs: stored.map(outboxDocumentOf),
      readAt,
      next: nextScanKey(request, stored, page),
    };
  };

  const perform = (action: OutsideAction): FeedEvent | null => {
    switch (action.type) {
      case "close":
        stream = null;
        return null;
      case "open":
        stream = { from: action.from, shown: new Set() };
        return { type: "opened" };
      case "pull":
        return pull(action.max);
      case "stamp":
        // The shell's bulk write: each document only when not stamped yet.
        for (const { id, ct } of action.docs)
          outbox.updateOne(
            { _id: docs().find((d) => d._id.toHexString() === id)?._id, ct: null },
            {
              $set: { ct: toTimestamp(ct) },
            },
          );
        return { type: "stamped" };
      case "scan":
        return scan(action.request);
    }
  };

  /** A new feed, as another process (or the same after feed.forget) has: nothing held, no stream. */
  const reopen = () => {
    holder.state = step(holder.state, { type: "readerGone" }).state;
    stream = null;
  };

  const savedPositions = () => [...saved.values()].map((cursor) => decodePosition(cursor));

  return {
    /** A unit of work that appended `entries`: its outbox document, committed a tick after its session's time. */
    append(entries: readonly ChangeEntry[]): void {
      const lb = now();
      clock += 1;
      const doc = newOutboxDocument(entries, lb);
      outbox.insertOne(doc);
      commits.push({ id: doc._id.toHexString(), ts: now() });
    },
    /** The port's readChanges, as change-stream-feed.ts answers it. */
    async readChanges(after: FeedCursor | null, limit: number): Promise<ChangePage> {
      clock += 1;
      const handed = await answerRead(holder, { type: "read", after: decodePosition(after), limit }, perform);
      const entries: LoggedChange[] = handed.map(({ entry, position }) => ({
        ...entry,
        cursor: encodePosition(position),
      }));
      return { entries, next: entries.at(-1)?.cursor ?? after };
    },
    setFeedPosition(name: string, position: FeedCursor | null): void {
      saved.set(name, position === null ? null : encodePosition(decodePosition(position) as never));
    },
    passedByAllReaders(): FeedCursor | null {
      const low = passedByAll(savedPositions());
      return low === null ? null : encodePosition(low);
    },
    pruneChanges(before: number, limit: number): number {
      const low = passedByAll(savedPositions());
      if (low === null) return 0;
      const candidates = outbox
        .find(pruneCandidates(low, before), { sort: { at: 1, _id: 1 } })
        .slice(0, limit) as StoredOutboxDocument[];
      const plan = planPrune(low, candidates, before, limit);
      for (const _id of plan.deletes) outbox.deleteOne({ _id });
      for (const trim of plan.trims) outbox.updateOne({ _id: trim._id }, trim.update);
      // As the session does (feed.forget): the feed keeps nothing it held once entries are deleted.
      if (plan.entries > 0) reopen();
      return plan.entries;
    },
    /** The port's changeLogLag, with the session's pipeline. */
    changeLogLag(after: FeedCursor | null): { changes: number; oldestCommittedAt: number | null } {
      const [row] = outbox.aggregate(lagPipeline(decodePosition(after)));
      return { changes: row?.changes ?? 0, oldestCommittedAt: row?.oldest ?? null };
    },
    reopen,
    /** The outbox's documents as stored (stamps included). */
    documents: docs,
    stampOf: (doc: StoredOutboxDocument) => (doc.ct ? fromTimestamp(doc.ct) : null),
  };
}
