/**
 * The outbox scan's pages on MongoDB (api/store/mongodb/feed/scan-page.ts): each page's filter and
 * order run by mingo over outbox documents of the engine's shape (mingo stands in for the server,
 * which cannot run here: it proves what the pages select and in which order, not the index that
 * serves them nor the snapshot they are read at), the next page's key from what a page read.
 */
import { describe, expect, test } from "bun:test";
import { ObjectId } from "mongodb";
import type { ScanRequest } from "../../../api/store/mongodb/feed/feed-events.ts";
import type { FeedPosition } from "../../../api/store/mongodb/feed/feed-position.ts";
import {
  newOutboxDocument,
  type StoredOutboxDocument,
  toTimestamp,
} from "../../../api/store/mongodb/feed/outbox-document.ts";
import { nextScanKey, scanPageFilter, scanPageSort } from "../../../api/store/mongodb/feed/scan-page.ts";
import { changeEntry } from "../conformance/fixtures.ts";
import { TimestampedCollection } from "./mingo-timestamps.ts";

const hex = (n: number) => n.toString(16).padStart(24, "0");
/** Document `id`, written having seen second `lb`, stamped at second `ct` (null: not yet). */
const doc = (id: number, lb: number, ct: number | null): StoredOutboxDocument => ({
  ...newOutboxDocument([changeEntry("ta", `m${id}`, 0, 1000)], { t: lb, i: 0 }),
  _id: new ObjectId(hex(id)),
  ct: ct === null ? null : toTimestamp({ t: ct, i: 1 }),
});
// Stamped by the stream at 10 and 20, by a scan at 50 (three, in their writers' order), and two not yet.
const outbox = new TimestampedCollection([
  doc(2, 19, 20),
  doc(1, 9, 10),
  doc(5, 31, 50),
  doc(3, 30, 50),
  doc(4, 31, 50),
  doc(7, 60, null),
  doc(6, 55, null),
]);

/** Every page of a scan from `origin`, `size` documents a page: the documents' ids, in the order read. */
function scanAll(origin: FeedPosition | null, size: number): number[] {
  const read: number[] = [];
  let request: ScanRequest = { origin, from: null, readAt: null };
  for (let pages = 0; pages < 20; pages++) {
    const page = outbox
      .find(scanPageFilter(request), { sort: scanPageSort(request) })
      .slice(0, size) as StoredOutboxDocument[];
    read.push(...page.map((d) => Number.parseInt(d._id.toHexString(), 16)));
    const next = nextScanKey(request, page, size);
    if (next === null) return read;
    request = { ...request, from: next };
  }
  throw new Error("the scan did not end");
}

describe("the outbox scan's pages", () => {
  for (const size of [1, 2, 500])
    test(`pages of ${size}: stamped documents in the stamp order from the reader's place, then the unstamped ones by lb`, () => {
      expect(scanAll(null, size)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      const stream: FeedPosition = { kind: "stream", ts: { t: 20, i: 1 }, k: 0, last: true, token: "82" };
      expect(scanAll(stream, size)).toEqual([2, 3, 4, 5, 6, 7]);
      // From a scan position: its own document again (the feed drops the entries passed), then those after it.
      const inScan: FeedPosition = {
        kind: "scan",
        ct: { t: 50, i: 1 },
        lb: { t: 31, i: 0 },
        doc: hex(4),
        k: 0,
        last: true,
      };
      expect(scanAll(inScan, size)).toEqual([4, 5, 6, 7]);
    });
});
