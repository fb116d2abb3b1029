/**
 * Where the change-feed readers have got to on MongoDB
 * (api/store/mongodb/feed/readers-passed.ts), as retention, the lag and
 * copying a store judge it, and the outbox document a unit of work that
 * copies entries writes. Positions in, a position and filters out; the
 * filters and the lag's pipeline are run by mingo over outbox documents of
 * the engine's shape, through the driver's BSON (their Timestamps as text
 * that orders as the server orders them: mingo-timestamps.ts): mingo stands
 * in for the server, which cannot run here. It proves what the documents select, not the
 * indexes that serve them, transactions or concurrency (the conformance
 * suite's, on a server).
 */

import { describe, expect, test } from "bun:test";
import { type Document, ObjectId } from "mongodb";
import type { ChangeEntry } from "../../../api/model/record-values.ts";
import {
  type ClusterTime,
  decodePosition,
  encodePosition,
  type FeedPosition,
  type ScanPosition,
  type StreamPosition,
} from "../../../api/store/mongodb/feed/feed-position.ts";
import {
  newOutboxDocument,
  type StoredOutboxDocument,
  toTimestamp,
} from "../../../api/store/mongodb/feed/outbox-document.ts";
import {
  comparePlaces,
  isEntryPassed,
  lagPipeline,
  passedByAll,
  passedDocuments,
} from "../../../api/store/mongodb/feed/readers-passed.ts";
import { TimestampedCollection } from "./mingo-timestamps.ts";
import { entryAt as entry } from "./scripted-stream.ts";

const time = (t: number, i = 1): ClusterTime => ({ t, i });
const at = (t: number, k: number, last: boolean): StreamPosition => ({
  kind: "stream",
  ts: time(t),
  k,
  last,
  token: `${t}${k}`.padStart(8, "0"),
});
const hex = (n: number) => n.toString(16).padStart(24, "0");
/** Past entry `k` of document `id` (written having seen second `lb`), stamped at second `ct`. */
const inScan = (ct: number, lb: number, id: number, k: number, last: boolean): ScanPosition => ({
  kind: "scan",
  ct: time(ct),
  lb: time(lb, 0),
  doc: hex(id),
  k,
  last,
});

/** Outbox document `id`, `n` entries, written having seen second `lb`, stamped at second `ct` (null: not yet). */
const stored = (id: number, n: number, lb: number, ct: number | null): StoredOutboxDocument => ({
  ...newOutboxDocument(
    Array.from({ length: n }, (_, k) => entry(`m${id}`, k, id * 100)),
    time(lb, 0),
  ),
  _id: new ObjectId(hex(id)),
  ct: ct === null ? null : toTimestamp(time(ct)),
});

/**
 * An outbox after a scan read at second 50 from the log's start: documents 1 and 2 stamped by the
 * stream before it (at their commits, 10 and 20), documents 3, 4, 5 stamped by the scan (50) in
 * their writers' order, document 6 committed after the scan (not stamped yet), document 7 stamped
 * by the stream at 60.
 */
const outbox = () =>
  new TimestampedCollection([
    stored(1, 1, 9, 10),
    stored(2, 2, 19, 20),
    stored(4, 1, 30, 50),
    stored(3, 2, 31, 50),
    stored(5, 1, 31, 50),
    stored(6, 1, 55, null),
    stored(7, 1, 59, 60),
  ]);
const ids = (docs: readonly Document[]) => docs.map((d) => Number.parseInt(d._id.toHexString(), 16));
const passedIds = (low: FeedPosition) => ids(outbox().find(passedDocuments(low), { sort: { _id: 1 } }));

describe("comparePlaces and passedByAll", () => {
  test("nothing is passed with no reader saved, or one saved at the log's start", () => {
    expect(passedByAll([])).toBeNull();
    expect(passedByAll([at(5, 0, true), null])).toBeNull();
    expect(passedByAll([inScan(50, 30, 4, 0, true), null])).toBeNull();
  });

  test("stream readers: by commit time, then part-way through a document before past it, then entry", () => {
    expect(passedByAll([at(7, 0, true), at(5, 2, true), at(6, 0, true)])).toEqual(at(5, 2, true));
    expect(passedByAll([at(5, 2, true), at(5, 1, false)])).toEqual(at(5, 1, false));
    expect(passedByAll([at(5, 3, false), at(5, 1, false)])).toEqual(at(5, 1, false));
  });

  test("scan readers: by their document's key in the stamp order (stamp, lb, _id), then entry", () => {
    const behind = inScan(50, 30, 4, 0, true);
    expect(passedByAll([inScan(50, 31, 5, 0, true), behind, inScan(50, 31, 3, 1, true)])).toEqual(behind);
    expect(passedByAll([inScan(50, 31, 3, 1, true), inScan(50, 31, 3, 0, false)])).toEqual(
      inScan(50, 31, 3, 0, false),
    );
    expect(passedByAll([inScan(50, 31, 5, 0, true), inScan(20, 19, 2, 1, true)])).toEqual(
      inScan(20, 19, 2, 1, true),
    );
  });

  test("a stream reader against a scan reader: by time; at the same time, short of its document less, past it more", () => {
    const scan = inScan(50, 31, 3, 0, false);
    expect(comparePlaces(at(49, 0, true), scan)).toBeLessThan(0);
    expect(comparePlaces(at(51, 0, false), scan)).toBeGreaterThan(0);
    expect(comparePlaces(at(50, 0, false), scan)).toBeLessThan(0);
    expect(comparePlaces(at(50, 0, true), scan)).toBeGreaterThan(0);
    expect(comparePlaces(scan, at(50, 0, true))).toBeLessThan(0);
    expect(passedByAll([at(60, 0, true), scan])).toEqual(scan);
  });

  test("the answer is a cursor the feed reads on from (the reader's own)", () => {
    for (const position of [at(5, 1, false), inScan(50, 31, 3, 0, false)])
      expect(decodePosition(encodePosition(passedByAll([position]) as FeedPosition))).toEqual(position);
  });
});

describe("passedDocuments, over the outbox (mingo)", () => {
  test("a stream reader: documents stamped before its place, or at it once past its document's last entry", () => {
    expect(passedIds(at(20, 0, false))).toEqual([1]);
    expect(passedIds(at(20, 1, true))).toEqual([1, 2]);
    // Past the scan's time: every document the scan stamped, whatever the stream showed of them.
    expect(passedIds(at(60, 0, true))).toEqual([1, 2, 3, 4, 5, 7]);
  });

  test("a scan reader: exactly the documents before its own in the stamp order, and its own once past its last entry", () => {
    expect(passedIds(inScan(20, 19, 2, 0, false))).toEqual([1]);
    expect(passedIds(inScan(20, 19, 2, 1, true))).toEqual([1, 2]);
    expect(passedIds(inScan(50, 30, 4, 0, true))).toEqual([1, 2, 4]);
    expect(passedIds(inScan(50, 31, 3, 0, false))).toEqual([1, 2, 4]);
    expect(passedIds(inScan(50, 31, 3, 1, true))).toEqual([1, 2, 3, 4]);
    expect(passedIds(inScan(50, 31, 5, 0, true))).toEqual([1, 2, 3, 4, 5]);
  });

  test("never a document no reader has stamped", () => {
    for (const low of [at(99, 0, true), inScan(99, 99, 99, 0, true)]) expect(passedIds(low)).not.toContain(6);
  });

  test("the feed drops from a scan exactly the entries its reader had passed (isEntryPassed)", () => {
    const key = (ct: number, lb: number, id: number) => ({ ct: time(ct), lb: time(lb, 0), doc: hex(id) });
    const reader = inScan(50, 31, 3, 0, false);
    expect(isEntryPassed(reader, key(50, 30, 4), 0)).toBe(true);
    expect(isEntryPassed(reader, key(50, 31, 3), 0)).toBe(true);
    expect(isEntryPassed(reader, key(50, 31, 3), 1)).toBe(false);
    expect(isEntryPassed(reader, key(50, 31, 5), 0)).toBe(false);
    expect(isEntryPassed(at(20, 0, false), key(20, 19, 2), 1)).toBe(false);
    expect(isEntryPassed(null, key(10, 9, 1), 0)).toBe(false);
  });
});

describe("lagPipeline, over the outbox (mingo)", () => {
  const lag = (from: FeedPosition | null) => {
    const [row] = outbox().aggregate(lagPipeline(from)) as { changes: number; oldest: number }[];
    return row ? { changes: row.changes, oldest: row.oldest } : null;
  };

  test("from the start every entry; from a place, the entries after it (unstamped documents included)", () => {
    expect(lag(null)).toEqual({ changes: 9, oldest: 100 });
    expect(lag(at(20, 0, false))).toEqual({ changes: 7, oldest: 200 });
    expect(lag(inScan(50, 31, 3, 0, false))).toEqual({ changes: 4, oldest: 300 });
    expect(lag(inScan(50, 31, 5, 0, true))).toEqual({ changes: 2, oldest: 600 });
    expect(lag(at(60, 0, true))).toEqual({ changes: 1, oldest: 600 });
  });
});

describe("the outbox document of a unit of work that copies entries (importChanges)", () => {
  const entry = (tenantId: string, mutationId: string, committedAt: number): ChangeEntry => ({
    tenantId,
    objectName: "Job",
    operation: "INSERT",
    uid: `u-${mutationId}`,
    before: null,
    after: { UID: `u-${mutationId}` },
    mutationId,
    sequence: 0,
    committedAt,
  });

  test("one document holds every entry in the order given, of any tenant; it is as old as its latest entry", () => {
    const entries = [entry("ta", "m2", 2000), entry("ta", "m3", 3000), entry("tb", "m1", 1500)];
    const document = newOutboxDocument(entries, { t: 1, i: 0 });
    expect(document.e).toEqual(entries);
    expect(document.n).toBe(3);
    // Retention deletes a document whole: never before its latest entry's time.
    expect(document.at).toBe(3000);
  });
});
