/**
 * Where the change-feed readers have got to on MongoDB
 * (api/store/mongodb/feed/readers-passed.ts), as retention and copying a store
 * judge it, and the outbox document a unit of work that copies entries
 * writes. Pure: positions in, a position and a filter out. (No MongoDB server
 * can run here; the filter's use by the server is the conformance suite's.)
 */
import { describe, expect, test } from "bun:test";
import type { ChangeEntry } from "../../../api/model/record-values.ts";
import {
  decodePosition,
  encodePosition,
  type StreamPosition,
} from "../../../api/store/mongodb/feed/feed-position.ts";
import { newOutboxDocument, toTimestamp } from "../../../api/store/mongodb/feed/outbox-document.ts";
import { passedByAll, passedDocuments } from "../../../api/store/mongodb/feed/readers-passed.ts";

const at = (t: number, k: number, last: boolean): StreamPosition => ({
  kind: "stream",
  ts: { t, i: 1 },
  k,
  last,
  token: `${t}${k}`.padStart(8, "0"),
});

describe("passedByAll", () => {
  test("nothing is passed with no reader saved, or one saved at the log's start (or scanning from it)", () => {
    expect(passedByAll([])).toBeNull();
    expect(passedByAll([at(5, 0, true), null])).toBeNull();
    const scanFromStart = {
      kind: "scan" as const,
      origin: null,
      readAt: { t: 9, i: 1 },
      doc: "a".repeat(24),
      k: 3,
    };
    expect(passedByAll([at(5, 0, true), scanFromStart])).toBeNull();
  });

  test("the earliest reader's place: by commit time, then part-way through a document before past it, then entry", () => {
    expect(passedByAll([at(7, 0, true), at(5, 2, true), at(6, 0, true)])).toEqual(at(5, 2, true));
    expect(passedByAll([at(5, 2, true), at(5, 1, false)])).toEqual(at(5, 1, false));
    expect(passedByAll([at(5, 3, false), at(5, 1, false)])).toEqual(at(5, 1, false));
  });

  test("a reader in a scan has passed its scan's origin, no more", () => {
    const origin = at(4, 0, true);
    const scan = { kind: "scan" as const, origin, readAt: { t: 9, i: 1 }, doc: "b".repeat(24), k: 0 };
    expect(passedByAll([at(6, 0, true), scan])).toEqual(origin);
  });

  test("the answer is a cursor the feed reads on from (the reader's own)", () => {
    const position = at(5, 1, false);
    expect(decodePosition(encodePosition(passedByAll([position]) as StreamPosition))).toEqual(position);
  });
});

describe("passedDocuments", () => {
  test("documents stamped before the place, or at it once the reader went past its last entry; never unstamped ones", () => {
    expect(passedDocuments(at(5, 0, true))).toEqual({ ct: { $lte: toTimestamp({ t: 5, i: 1 }), $ne: null } });
    expect(passedDocuments(at(5, 0, false))).toEqual({ ct: { $lt: toTimestamp({ t: 5, i: 1 }), $ne: null } });
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
