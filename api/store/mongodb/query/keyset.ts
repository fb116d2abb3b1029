/**
 * An order's `$sort`, the keyset query of a page after a cursor, and the sort keys read back from a
 * listed document. NULLs sort lowest in MongoDB already (null and missing before every other type),
 * first ascending and last descending, as the store port wants (records-port.ts); the keyset says
 * the same in its comparisons. Keys are the comparable paths (a decimal's shadow), so the order,
 * the keyset and EQL's comparisons agree on every value.
 */
import type { Document } from "mongodb";
import type { OrderTerm } from "../../../eql/parse-order-by.ts";
import { SORT_KEYS_FIELD } from "./mql-layout.ts";
import { keysetValue, sortKeyValue } from "./mql-values.ts";
import { allOf, anyOf, NEVER } from "./query-logic.ts";

/**
 * `$sort` over the key paths in the order's directions. A path already sorted by is left out of
 * later terms (a JavaScript object cannot hold a key twice, and its later direction could not
 * change the order of records already tied on it).
 */
export function sortSpec(keyPaths: readonly string[], order: readonly OrderTerm[]): Document {
  const spec: Document = {};
  keyPaths.forEach((path, i) => {
    if (!(path in spec)) spec[path] = order[i]?.direction === "DESC" ? -1 : 1;
  });
  return spec;
}

/**
 * Records after the position `after` (a listed record's sort keys, `readSortKey`) in the order:
 * the first key greater (ascending) or smaller (descending), or equal and the rest after. NULL is
 * the lowest value: nothing is below it, everything non-null is above it.
 */
export function keysetQuery(
  keyPaths: readonly string[],
  order: readonly OrderTerm[],
  after: readonly (string | number | null)[],
): Document {
  const valueAt = (i: number) => {
    const key = after[i] ?? null;
    return key === null ? null : keysetValue(key, (order[i] as OrderTerm).operand.valueClass);
  };
  const alternatives = keyPaths.map((path, i) => {
    const parts: Document[] = [];
    for (let j = 0; j < i; j++)
      parts.push({ [keyPaths[j] as string]: valueAt(j) === null ? null : { $eq: valueAt(j) } });
    const value = valueAt(i);
    const descending = order[i]?.direction === "DESC";
    if (value === null) parts.push(descending ? NEVER : { [path]: { $ne: null } });
    else
      parts.push(
        descending ? anyOf([{ [path]: { $lt: value } }, { [path]: null }]) : { [path]: { $gt: value } },
      );
    return allOf(parts);
  });
  return anyOf(alternatives);
}

/** The sort-key values a listed document carries under `SORT_KEYS_FIELD`, as cursors carry them. */
export function readSortKey(document: Document): (string | number | null)[] {
  const keys = document[SORT_KEYS_FIELD];
  return Array.isArray(keys) ? keys.map(sortKeyValue) : [];
}
