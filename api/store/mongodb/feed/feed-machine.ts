/**
 * The change feed's source on MongoDB, as a pure state machine: the
 * reader's reads and what the change stream and the outbox answered come in
 * as events; what to do next (open, pull, stamp, scan, hand entries to the
 * reader, fail the read, close) goes out as actions. No driver, clock or
 * network: change-stream-feed.ts carries the actions out and feeds the
 * results back, and the tests feed scripted streams.
 *
 * - A read names the position the reader stands at. If the entries after it
 *   are already here (the buffer), they are handed; otherwise the stream is
 *   pulled. A read from any other position (a restart, or the lease lost and
 *   taken back: the reader goes back to its saved position) keeps nothing:
 *   the stream is closed and opened again from that position, after its
 *   resume token.
 * - Entries the stream shows at or before the position it was opened from,
 *   or already received, are dropped (a resume may show some again).
 * - A resumable error reopens the stream from the last event received, up to
 *   MAX_FAILURES times in a row; then the read fails (the reader retries).
 * - History lost (the oplog has rolled past the position), or a read from
 *   the log's start or from a scan position: the outbox is scanned from the
 *   reader's position, page by page at one snapshot, and the stream reopened
 *   at that snapshot's time, dropping what it shows up to that time. A scan
 *   hands each entry at its document's key in the stamp order, so a reader
 *   saved in a scan goes on exactly after it (readers-passed.ts).
 * - Before entries are handed, their outbox documents are stamped with
 *   their commit time (a scan's, with its read time), so that a later scan
 *   knows what has been handed (docs/mongodb-layout.md, "The change feed").
 */

import type {
  FeedAction,
  FeedEvent,
  OutboxDocument,
  PositionedEntry,
  ScanKey,
  ScanRequest,
  StreamEvent,
} from "./feed-events.ts";
import {
  type ClusterTime,
  compareTimes,
  type FeedPosition,
  type ResumePoint,
  resumeFrom,
  samePosition,
} from "./feed-position.ts";
import { isEntryPassed } from "./readers-passed.ts";
import { classifyStreamError } from "./stream-errors.ts";

/** Stream entries at or before this are dropped (`k` Infinity: everything at `ts`). */
interface Floor {
  ts: ClusterTime;
  k: number;
}

/** What the machine holds between reads: entries after `base` (the reader's position), and where the stream stands. */
interface Held {
  base: FeedPosition | null;
  entries: PositionedEntry[];
  limit: number;
  failures: number;
  /** Null until the stream has a place (before a scan from the log's start has finished). */
  floor: Floor | null;
  resume: ResumePoint | null;
}

interface Scan {
  /** The reader's place the scan started from (null: the log's start). */
  origin: FeedPosition | null;
  readAt: ClusterTime | null;
  next: ScanKey | null;
}

export type FeedState =
  | { phase: "closed" }
  | { phase: "opening"; held: Held }
  | { phase: "streaming"; held: Held }
  | { phase: "stamping"; held: Held; arriving: PositionedEntry[]; then: "stream" | Scan | "scanDone" }
  /** Waiting for a scan's page (`scan.readAt` null before the first). */
  | { phase: "scanning"; held: Held; scan: Scan }
  /** Between a scan's pages: the reader is served from the entries held. */
  | { phase: "scanPaused"; held: Held; scan: Scan };

export interface Transition {
  state: FeedState;
  actions: FeedAction[];
}

/** Resumable failures in a row (each after the driver's own retry) before a read fails. */
export const MAX_FAILURES = 3;

export const CLOSED: FeedState = { phase: "closed" };

const at = (state: FeedState, ...actions: FeedAction[]): Transition => ({ state, actions });
const isAfter = (ts: ClusterTime, k: number, floor: Floor | null) =>
  floor === null || compareTimes(ts, floor.ts) > 0 || (compareTimes(ts, floor.ts) === 0 && k > floor.k);
const hand = (held: Held): FeedAction => ({ type: "hand", entries: held.entries.slice(0, held.limit) });
const scanFrom = (held: Held, origin: FeedPosition | null): Transition => {
  const scan: Scan = { origin, readAt: null, next: null };
  return at(
    { phase: "scanning", held: { ...held, entries: [] }, scan },
    { type: "scan", request: { origin, from: null, readAt: null } },
  );
};

/** The request for a scan's next page. */
const nextPage = (scan: Scan): ScanRequest => ({ origin: scan.origin, from: scan.next, readAt: scan.readAt });

/** A fresh start from the reader's position: a scan from the log's start or a scan position, else the stream after it. */
function start(after: FeedPosition | null, limit: number): Transition {
  const held: Held = { base: after, entries: [], limit, failures: 0, floor: null, resume: null };
  if (after === null || after.kind === "scan") return scanFrom(held, after);
  const floored = { ...held, floor: { ts: after.ts, k: after.k }, resume: resumeFrom(after) };
  return at({ phase: "opening", held: floored }, { type: "open", from: resumeFrom(after) });
}

/** The reader's read in a resting phase: served from what is held, or more is fetched; another position starts over. */
function read(
  state: Extract<FeedState, { phase: "streaming" | "scanPaused" }>,
  after: FeedPosition | null,
  limit: number,
): Transition {
  const { held } = state;
  const index = samePosition(after, held.base)
    ? 0
    : held.entries.findIndex((e) => samePosition(e.position, after)) + 1;
  if (index === 0 && !samePosition(after, held.base)) {
    const fresh = start(after, limit);
    return at(fresh.state, { type: "close" }, ...fresh.actions);
  }
  const kept: Held = { ...held, base: after, entries: held.entries.slice(index), limit, failures: 0 };
  if (kept.entries.length >= limit) return at({ ...state, held: kept }, hand(kept));
  if (state.phase === "scanPaused")
    return at(
      { phase: "scanning", held: kept, scan: state.scan },
      { type: "scan", request: nextPage(state.scan) },
    );
  return at({ phase: "streaming", held: kept }, { type: "pull", max: limit - kept.entries.length });
}

/** The events a pull brought: new entries kept (stamped first), old ones dropped. */
function received(held: Held, events: readonly StreamEvent[]): Transition {
  if (events.length === 0) return at({ phase: "streaming", held }, hand(held));
  let { floor, resume } = held;
  const arriving: PositionedEntry[] = [];
  const unstamped = new Map<string, ClusterTime>();
  for (const event of events) {
    const last = event.doc.from + event.doc.entries.length - 1;
    event.doc.entries.forEach((entry, i) => {
      const k = event.doc.from + i;
      if (!isAfter(event.ts, k, floor)) return;
      arriving.push({
        entry,
        position: { kind: "stream", ts: event.ts, k, last: k === last, token: event.token },
      });
      if (event.doc.ct === null) unstamped.set(event.doc.id, event.ts);
    });
    if (isAfter(event.ts, Math.max(last, 0), floor)) floor = { ts: event.ts, k: last };
    resume = { startAfter: event.token };
  }
  const moved: Held = { ...held, floor, resume, failures: 0 };
  // Every event shown again (a resume): nothing new yet, so ask the stream once more.
  if (arriving.length === 0)
    return at({ phase: "streaming", held: moved }, { type: "pull", max: held.limit - held.entries.length });
  return stamp(moved, arriving, unstamped, "stream");
}

/** Stamps the documents of `arriving` that lack a commit time, then holds them (now, when none lack one). */
function stamp(
  held: Held,
  arriving: PositionedEntry[],
  unstamped: Map<string, ClusterTime>,
  then: "stream" | Scan | "scanDone",
): Transition {
  if (unstamped.size === 0) return stamped({ phase: "stamping", held, arriving, then });
  const docs = [...unstamped].map(([id, ct]) => ({ id, ct }));
  return at({ phase: "stamping", held, arriving, then }, { type: "stamp", docs });
}

function stamped(state: FeedState & { phase: "stamping" }): Transition {
  const held: Held = { ...state.held, entries: [...state.held.entries, ...state.arriving] };
  const { then } = state;
  if (then === "stream") return at({ phase: "streaming", held }, hand(held));
  if (then === "scanDone") {
    if (held.resume === null) throw new Error("a finished scan leaves the stream a place to open");
    return at({ phase: "opening", held }, { type: "open", from: held.resume });
  }
  if (held.entries.length >= held.limit) return at({ phase: "scanPaused", held, scan: then }, hand(held));
  return at({ phase: "scanning", held, scan: then }, { type: "scan", request: nextPage(then) });
}

/**
 * A page of the outbox scan: its entries held (minus those the reader had passed), each at its
 * document's key in the stamp order (one it stamps now: at the read time, after every stamp it
 * read), then the next page or the stream.
 */
function scanned(
  state: FeedState & { phase: "scanning" },
  docs: readonly OutboxDocument[],
  readAt: ClusterTime,
  next: ScanKey | null,
): Transition {
  const { origin } = state.scan;
  const arriving: PositionedEntry[] = [];
  const unstamped = new Map<string, ClusterTime>();
  for (const doc of docs) {
    const key = { ct: doc.ct ?? readAt, lb: doc.lb, doc: doc.id };
    const last = doc.from + doc.entries.length - 1;
    doc.entries.forEach((entry, i) => {
      const k = doc.from + i;
      if (doc.ct !== null && isEntryPassed(origin, key, k)) return;
      arriving.push({ entry, position: { kind: "scan", ...key, k, last: k === last } });
      if (doc.ct === null) unstamped.set(doc.id, readAt);
    });
  }
  const held: Held = { ...state.held, failures: 0 };
  if (next !== null) return stamp(held, arriving, unstamped, { origin, readAt, next });
  // The scan read everything committed up to readAt: the stream goes on from there, showing nothing up to it again.
  const after: Held = {
    ...held,
    floor: { ts: readAt, k: Number.POSITIVE_INFINITY },
    resume: { startAtOperationTime: readAt },
  };
  return stamp(after, arriving, unstamped, "scanDone");
}

/** A failure of the stream, a stamp or a scan. */
function failed(state: Exclude<FeedState, { phase: "closed" }>, error: unknown): Transition {
  const kind = classifyStreamError(error);
  const failures = state.held.failures + 1;
  if (state.phase === "stamping" || kind === "fatal" || failures > MAX_FAILURES)
    return at(CLOSED, { type: "close" }, { type: "fail", error });
  const held: Held = { ...state.held, failures };
  if (state.phase === "scanning" || state.phase === "scanPaused") {
    // A scan starts over at a new snapshot: what it held is read again.
    const again = scanFrom(held, state.scan.origin);
    return at(again.state, ...again.actions);
  }
  if (kind === "historyLost") {
    const again = scanFrom(held, held.base);
    return at(again.state, { type: "close" }, ...again.actions);
  }
  if (held.resume === null) return at(CLOSED, { type: "close" }, { type: "fail", error });
  return at({ phase: "opening", held }, { type: "close" }, { type: "open", from: held.resume });
}

/** The machine's one step. An event the phase does not expect (a late answer) changes nothing. */
export function step(state: FeedState, event: FeedEvent): Transition {
  if (event.type === "readerGone")
    return at(CLOSED, ...(state.phase === "closed" ? [] : [{ type: "close" } as const]));
  // The shell reads one at a time; a read while an answer is awaited is refused, not interleaved.
  if (
    event.type === "read" &&
    (state.phase === "opening" || state.phase === "stamping" || state.phase === "scanning")
  )
    return at(state, {
      type: "fail",
      error: new Error("a read of the change feed while another is under way"),
    });
  switch (state.phase) {
    case "closed":
      return event.type === "read" ? start(event.after, event.limit) : at(state);
    case "streaming":
    case "scanPaused":
      if (event.type === "read") return read(state, event.after, event.limit);
      if (event.type === "received" && state.phase === "streaming") return received(state.held, event.events);
      if (event.type === "failed") return failed(state, event.error);
      return at(state);
    case "opening":
      if (event.type === "opened") {
        const held = state.held;
        return held.entries.length > 0
          ? at({ phase: "streaming", held }, hand(held))
          : at({ phase: "streaming", held }, { type: "pull", max: held.limit });
      }
      return event.type === "failed" ? failed(state, event.error) : at(state);
    case "stamping":
      if (event.type === "stamped") return stamped(state);
      return event.type === "failed" ? failed(state, event.error) : at(state);
    case "scanning":
      if (event.type === "scanned") return scanned(state, event.docs, event.readAt, event.next);
      return event.type === "failed" ? failed(state, event.error) : at(state);
  }
}
