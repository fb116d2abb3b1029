/**
 * One step of change-log retention over the outbox, as documents: the
 * lowest saved reader's place, the cut-off and the step's limit in; the
 * filter of the outbox documents it may take entries from, and, for those
 * documents, which go whole and which lose their first entries out (a
 * document is a unit of work's entries, and a reader may have stopped
 * part-way through one). Pure: change-log-session.ts reads, deletes and
 * updates in the step's unit of work.
 */
import { type Document, ObjectId } from "mongodb";
import { compareTimes, type FeedPosition } from "./feed-position.ts";
import { fromTimestamp, type StoredOutboxDocument, toTimestamp } from "./outbox-document.ts";
import { passedDocuments } from "./readers-passed.ts";

/** What a step deletes: documents whole, the first entries of others, and how many entries in all. */
export interface PrunePlan {
  deletes: ObjectId[];
  trims: { _id: ObjectId; update: Document }[];
  entries: number;
}

/**
 * The outbox documents a step at `low` may take entries from (the session reads them sorted by
 * `at`, at most `limit`: each gives one entry at least): the wholly passed ones and the one `low`
 * stopped part-way through, whose first entry left was committed before `before`.
 */
export function pruneCandidates(low: FeedPosition, before: number): Document {
  const partly = low.last
    ? []
    : [low.kind === "scan" ? { _id: new ObjectId(low.doc) } : { ct: toTimestamp(low.ts) }];
  return { $and: [{ $or: [passedDocuments(low), ...partly] }, { "e.0.committedAt": { $lt: before } }] };
}

/** How many of `doc`'s entries (as it holds them) a reader at `low` has passed. */
function passedIn(low: FeedPosition, doc: StoredOutboxDocument): number {
  const o = doc.o ?? 0;
  if (low.last) return doc.n;
  const partly =
    low.kind === "scan"
      ? doc._id.toHexString() === low.doc
      : doc.ct !== null && doc.ct !== undefined && compareTimes(fromTimestamp(doc.ct), low.ts) === 0;
  return partly ? Math.min(doc.n, Math.max(0, low.k + 1 - o)) : doc.n;
}

/**
 * The step over `candidates` (read with `pruneCandidates`, in `at` order): from each, the leading
 * entries `low` has passed and committed before `before` (one committed after waits, and those
 * behind it), at most `limit` entries in all. A document that loses all its entries is deleted;
 * one that loses some keeps the rest, with `o` counting those gone (a cursor names an entry by its
 * index in the unit) and `at` the latest of the rest.
 */
export function planPrune(
  low: FeedPosition,
  candidates: readonly StoredOutboxDocument[],
  before: number,
  limit: number,
): PrunePlan {
  const plan: PrunePlan = { deletes: [], trims: [], entries: 0 };
  for (const doc of candidates) {
    const room = limit - plan.entries;
    if (room <= 0) break;
    const passed = passedIn(low, doc);
    let take = 0;
    while (take < passed && take < room && (doc.e[take]?.committedAt ?? before) < before) take++;
    if (take === 0) continue;
    plan.entries += take;
    if (take === doc.n) {
      plan.deletes.push(doc._id);
      continue;
    }
    const e = doc.e.slice(take);
    const at = e.reduce((latest, entry) => Math.max(latest, entry.committedAt), 0);
    plan.trims.push({ _id: doc._id, update: { $set: { e, n: e.length, o: (doc.o ?? 0) + take, at } } });
  }
  return plan;
}
