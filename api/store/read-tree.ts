/**
 * A query's whole answer as one tree of reads, for an engine that can build
 * the answer's JSON itself (`Store.readJson`) instead of handing rows to
 * resolvers. Each node says what stands at its place in the answer; `value`,
 * `lookup` and `related` read from the nearest record around them (a listed
 * row, a lookup's target, a related child, a record read by UID).
 *
 * A tree is made once per document and operation and reused: what varies per
 * request (page sizes, a UID) is a slot, an index into the values passed with
 * the tree, so an engine may compile a tree once (trees are immutable).
 */

import type { CheckedFilter } from "../eql/checked-filter.ts";
import type { OrderTerm } from "../eql/parse-order-by.ts";
import type { FieldDef, ObjectDef } from "../model/catalogue.ts";

/** An index into the values that come with a tree. */
export type Slot = number;

/** Which records a list reads, in which order. Filters never read NOW(): such queries are not trees. */
export interface ReadList {
  object: ObjectDef;
  filter: CheckedFilter | null;
  order: readonly OrderTerm[];
}

export type ReadNode =
  /** A JSON object: its entries in this order. */
  | { kind: "object"; entries: readonly (readonly [string, ReadNode])[] }
  /** A fixed value (`__typename`, say). */
  | { kind: "constant"; value: string | boolean }
  /** A field of the current record, in its GraphQL form; `nonNull` fields must hold a value. */
  | { kind: "value"; field: FieldDef; nonNull: boolean }
  /** The record the current record's reference points at, as `node`, or null. */
  | { kind: "lookup"; reference: FieldDef; target: ObjectDef; node: ReadNode }
  /** The array of the current record's children (whose `reference` points at it), first `limit` of them. */
  | { kind: "related"; list: ReadList; reference: FieldDef; limit: Slot; node: ReadNode }
  /** A page of a list (a connection): `node` once, for the page; `first` rows from `offset`. */
  | { kind: "page"; list: ReadList; first: Slot; offset: Slot; node: ReadNode }
  /** Inside a page: the array of its rows, `node` for each. */
  | { kind: "rows"; node: ReadNode }
  /** Inside a page's rows: the row's offset in the whole list. */
  | { kind: "rowOffset" }
  /** Inside a page: whether the list goes on past the page. */
  | { kind: "hasMore" }
  /** Inside a page: whether rows come before the page (its offset is past 0). */
  | { kind: "hasPrevious" }
  /** Inside a page: how many records the list has in all. */
  | { kind: "count" }
  /** The record with the UID in `uid`, as `node`, or null. */
  | { kind: "record"; object: ObjectDef; uid: Slot; node: ReadNode };

export type ReadValue = string | number;
