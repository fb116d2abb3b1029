/**
 * Checked filters and parsed orders per object and text, one cache per
 * catalogue: clients send the same ones again and again, and every way of
 * answering a query (resolvers, read trees) shares them, so the same texts
 * give the same objects (the store keys its statement plans on them).
 */
import { setNewest } from "../../../common/bounded-map.ts";
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

/** Texts kept per catalogue, least recently used dropped first. */
const KEPT = 1000;
const caches = new WeakMap<Catalogue, Map<string, PreparedArguments>>();

/** @throws FilterParseError (and the like) for a bad filter or orderBy: never cached. */
export function prepareArguments(
  catalogue: Catalogue,
  object: ObjectDef,
  filterText: string | null | undefined,
  orderText: string | null | undefined,
): PreparedArguments {
  let cache = caches.get(catalogue);
  if (!cache) {
    cache = new Map();
    caches.set(catalogue, cache);
  }
  const key = JSON.stringify([object.name, filterText ?? "", orderText ?? ""]);
  let entry = cache.get(key);
  if (!entry) {
    const order = parseOrderBy(orderText, object, catalogue);
    const filter = filterText ? prepareFilter(filterText, object, catalogue) : null;
    entry = { filter, order, fingerprint: orderFingerprint(order) };
    setNewest(cache, key, entry, KEPT);
  }
  return entry;
}
