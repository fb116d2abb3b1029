/**
 * The outbox scan's pages, as documents: a scan request and the key reached
 * in, the filter and sort of the next page (served by the change_log_commit
 * index) and the key after it out. Pure: change-stream-feed.ts sends them
 * with the snapshot read concern; the tests run them with mingo.
 */
import { type Document, ObjectId } from "mongodb";
import type { ScanKey, ScanRequest } from "./feed-events.ts";
import type { ClusterTime, FeedPosition } from "./feed-position.ts";
import { fromTimestamp, type StoredOutboxDocument, toTimestamp } from "./outbox-document.ts";
import { stampOrderFilter } from "./readers-passed.ts";

/** The scan's key: which half (stamped documents, then unstamped ones) and the last document read. */
interface Key {
  half: "stamped" | "unstamped";
  last: { ct: ClusterTime | null; lb: ClusterTime; id: string } | null;
}

const FIRST: Key = { half: "stamped", last: null };

/** The key a request goes on from (the first page's when none). */
const keyOf = (request: ScanRequest): Key => (request.from as Key | null) ?? FIRST;

/**
 * The stamped documents a scan from the reader's place reads: from its commit time (a stream
 * position), from its document's key (a scan position: that document again, for the entries after
 * the place), all of them (the log's start). The feed drops the entries the reader has passed.
 */
function fromOrigin(origin: FeedPosition | null): Document {
  if (origin === null) return { ct: { $ne: null } };
  if (origin.kind === "scan") return stampOrderFilter(origin, "$gte");
  return { ct: { $gte: toTimestamp(origin.ts) } };
}

/** The filter of the request's page (layout.ts, change_log_commit serves both halves in index order). */
export function scanPageFilter(request: ScanRequest): Document {
  const key = keyOf(request);
  const { last } = key;
  if (key.half === "stamped") {
    const after = last?.ct ? [stampOrderFilter({ ct: last.ct, lb: last.lb, doc: last.id }, "$gt")] : [];
    return { $and: [fromOrigin(request.origin), ...after] };
  }
  const after = last
    ? [
        {
          $or: [
            { lb: { $gt: toTimestamp(last.lb) } },
            { lb: toTimestamp(last.lb), _id: { $gt: new ObjectId(last.id) } },
          ],
        },
      ]
    : [];
  return { $and: [{ ct: null }, ...after] };
}

/** The order of the request's page: the stamp order, then, unstamped, the writers' order. */
export function scanPageSort(request: ScanRequest): Document {
  return keyOf(request).half === "stamped" ? { ct: 1, lb: 1, _id: 1 } : { lb: 1, _id: 1 };
}

/** Where the scan goes on after a page of `page` documents read for `request` (null: it is done). */
export function nextScanKey(
  request: ScanRequest,
  stored: readonly StoredOutboxDocument[],
  page: number,
): ScanKey | null {
  const key = keyOf(request);
  const lastStored = stored.at(-1);
  let next: Key | null = null;
  if (stored.length === page && lastStored)
    next = {
      half: key.half,
      last: {
        ct: lastStored.ct ? fromTimestamp(lastStored.ct) : null,
        lb: fromTimestamp(lastStored.lb),
        id: lastStored._id.toHexString(),
      },
    };
  else if (key.half === "stamped") next = { half: "unstamped", last: null };
  return next as ScanKey | null;
}
