/**
 * One step of change-log retention on MongoDB (api/store/mongodb/feed/prune-plan.ts): the
 * candidates' filter run by mingo over outbox documents of the engine's shape (mingo stands in for
 * the server, which cannot run here: it proves what the filter selects, not the index that serves
 * it, nor the step's transaction), and the plan a step makes of them.
 */

import { describe, expect, test } from "bun:test";
import { type Document, ObjectId } from "mongodb";
import type { FeedPosition, ScanPosition } from "../../../api/store/mongodb/feed/feed-position.ts";
import {
  newOutboxDocument,
  type StoredOutboxDocument,
  toTimestamp,
} from "../../../api/store/mongodb/feed/outbox-document.ts";
import { planPrune, pruneCandidates } from "../../../api/store/mongodb/feed/prune-plan.ts";
import { TimestampedCollection } from "./mingo-timestamps.ts";
import { entryAt as entry } from "./scripted-stream.ts";

const hex = (n: number) => n.toString(16).padStart(24, "0");
/** Document `id` of entries committed at `times`, stamped at second `ct` by a scan (lb: second `id`). */
const doc = (id: number, times: number[], ct: number): StoredOutboxDocument => ({
  ...newOutboxDocument(
    times.map((at, k) => entry(`m${id}`, k, at)),
    { t: id, i: 0 },
  ),
  _id: new ObjectId(hex(id)),
  ct: toTimestamp({ t: ct, i: 1 }),
});
const inScan = (id: number, k: number, last: boolean): ScanPosition => ({
  kind: "scan",
  ct: { t: 50, i: 1 },
  lb: { t: id, i: 0 },
  doc: hex(id),
  k,
  last,
});
const outbox = () =>
  new TimestampedCollection([
    doc(1, [100], 50),
    doc(2, [200, 200], 50),
    doc(3, [300, 400, 900], 50),
    doc(4, [500], 50),
  ]);
const candidates = (low: FeedPosition, before: number) =>
  outbox().find(pruneCandidates(low, before), { sort: { at: 1, _id: 1 } }) as StoredOutboxDocument[];
const ids = (docs: readonly Document[]) => docs.map((d) => Number.parseInt(d._id.toHexString(), 16));

describe("a retention step over the outbox", () => {
  test("the candidates: documents wholly passed, and the one the reader stopped in, whose first entry is old", () => {
    expect(ids(candidates(inScan(3, 0, false), 1000))).toEqual([1, 2, 3]);
    expect(ids(candidates(inScan(3, 2, true), 1000))).toEqual([1, 2, 3]);
    expect(ids(candidates(inScan(3, 0, false), 250))).toEqual([1, 2]);
    expect(ids(candidates(inScan(2, 1, true), 1000))).toEqual([1, 2]);
  });

  test("whole documents go, the one stopped in loses the entries passed; at most `limit` entries in all", () => {
    const low = inScan(3, 1, false);
    const plan = planPrune(low, candidates(low, 1000), 1000, 10);
    expect(ids(plan.deletes.map((_id) => ({ _id })))).toEqual([1, 2]);
    expect(plan.entries).toBe(5);
    expect(plan.trims).toEqual([
      { _id: new ObjectId(hex(3)), update: { $set: { e: [entry("m3", 2, 900)], n: 1, o: 2, at: 900 } } },
    ]);
    const limited = planPrune(low, candidates(low, 1000), 1000, 2);
    expect(limited.entries).toBe(2);
    expect(ids(limited.deletes.map((_id) => ({ _id })))).toEqual([1]);
    expect(limited.trims).toEqual([
      { _id: new ObjectId(hex(2)), update: { $set: { e: [entry("m2", 1, 200)], n: 1, o: 1, at: 200 } } },
    ]);
  });

  test("an entry committed after the cut-off waits, and those behind it in its document", () => {
    const low = inScan(3, 2, true);
    const plan = planPrune(low, candidates(low, 350), 350, 10);
    expect(plan.entries).toBe(4);
    expect(plan.trims).toEqual([
      {
        _id: new ObjectId(hex(3)),
        update: { $set: { e: [entry("m3", 1, 400), entry("m3", 2, 900)], n: 2, o: 1, at: 900 } },
      },
    ]);
  });

  test("a document trimmed before: the cursor's index is the unit's, so only what is left past it stays", () => {
    const trimmed = {
      ...doc(3, [300, 400, 900], 50),
      e: [entry("m3", 1, 400), entry("m3", 2, 900)],
      n: 2,
      o: 1,
    };
    const plan = planPrune(inScan(3, 1, false), [trimmed], 1000, 10);
    expect(plan.trims[0]?.update).toEqual({ $set: { e: [entry("m3", 2, 900)], n: 1, o: 2, at: 900 } });
    expect(planPrune(inScan(3, 0, false), [trimmed], 1000, 10).entries).toBe(0);
  });
});
