/**
 * Checked filters and parsed orders per object and text, one cache per
 * catalogue (going with it), bounded by estimated bytes: clients send the same
 * ones again and again, and every way of answering a query (resolvers, read
 * trees) shares them, so the same texts give the same objects (the store keys
 * its statement plans on them).
 */
import { type ByteBoundedMap, createByteBoundedMap } from "../../../common/bounded-map.ts";
import { prepareFilter } from "../../eql/check-filter.ts";
import type { CheckedFilter } from "../../eql/checked-filter.ts";
import { type OrderTerm, parseOrderBy } from "../../eql/parse-order-by.ts";
import type { Catalogue, ObjectDef } from "../../model/catalogue.ts";
import { orderFingerprint } from "./cursor.ts";

export interface PreparedArguments {
  filter: CheckedFilter | null;
  order: OrderTerm[];
  /** The order's fingerprint, which its cursors carry. */
  fingerprint: string;
}

/**
 * What one catalogue's prepared arguments may hold, in estimated bytes, least recently used dropped
 * first (a filter may be 10,000 characters long, so a count bounds little).
 */
const BUDGET_BYTES = 4 * 1024 * 1024;
/**
 * An entry's estimate: a fixed part, and per character of its texts the checked filter, the order and
 * the statement plans the store makes from them (heap growth measured over 1,000 filters of 42 and
 * of 9,486 characters: 3.8 KB and 89 KB each; the estimate is 1.3 times that).
 */
const ENTRY_BYTES = 4096;
const BYTES_PER_CHAR = 12;

const caches = new WeakMap<Catalogue, ByteBoundedMap<string, PreparedArguments>>();

/** @throws FilterParseError (and the like) for a bad filter or orderBy: never cached. */
export function prepareArguments(
  catalogue: Catalogue,
  object: ObjectDef,
  filterText: string | null | undefined,
  orderText: string | null | undefined,
): PreparedArguments {
  let cache = caches.get(catalogue);
  if (!cache) {
    cache = createByteBoundedMap(BUDGET_BYTES);
    caches.set(catalogue, cache);
  }
  const key = JSON.stringify([object.name, filterText ?? "", orderText ?? ""]);
  let entry = cache.get(key);
  if (!entry) {
    const order = parseOrderBy(orderText, object, catalogue);
    const filter = filterText ? prepareFilter(filterText, object, catalogue) : null;
    entry = { filter, order, fingerprint: orderFingerprint(order) };
    cache.set(key, entry, ENTRY_BYTES + key.length * BYTES_PER_CHAR);
  }
  return entry;
}

/** How many prepared arguments `catalogue` keeps, and their estimated bytes. */
export function preparedArgumentsUsage(catalogue: Catalogue): { entries: number; bytes: number } {
  return caches.get(catalogue)?.usage() ?? { entries: 0, bytes: 0 };
}
