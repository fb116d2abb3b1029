import type { ObjectDef } from "../../../model/catalogue.ts";

/** Where a tenant's records of each object live, as the compiled pipelines read them. */
export interface MqlLayout {
  /** The collection holding `object`'s records. */
  collection(object: ObjectDef): string;
  /**
   * This tenant's records of `object` in that collection, as equalities on top-level fields
   * (e.g. `{t: tenantId, o: objectName}`): used as a query, and to check joined documents.
   */
  scope(object: ObjectDef): Readonly<Record<string, string | number>>;
  /** The path of the sub-document holding a record's values (record-codec.ts), e.g. `"d"`. */
  valuesPath: string;
  /**
   * The path of a record document's UID (e.g. `u`). The compiler reads a record's UID there
   * (filters, orders and keysets on UID, the last key of every order: an index `{scope…, uid}`
   * serves them) and joins lookup paths on it alone: an index on this path by itself must exist,
   * or each join scans the collection.
   */
  uidPath: string;
}

/**
 * The collation every compiled pipeline runs under: simple, i.e. strings compared by their UTF-8
 * bytes, which is code-point order (EQL's). Passed explicitly with each aggregate, so a collection
 * created with another default collation still answers as EQL does.
 */
export const MQL_COLLATION = { locale: "simple" } as const;

/**
 * Prefix of the top-level fields the pipelines add (joined records, sub-query probes, sort keys).
 * A record document's own top-level fields are the engine's and never start with it.
 */
export const TEMPORARY_PREFIX = "_eql_";

/** The field a listed record's sort-key values are put in (one per order term). */
export const SORT_KEYS_FIELD = `${TEMPORARY_PREFIX}k`;

/** The field a listed record's joined to-one lookups are put in, by reference storage name. */
export const JOINED_FIELD = `${TEMPORARY_PREFIX}l`;
