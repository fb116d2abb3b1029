/**
 * The records aggregate of the store port: a tenant's records of each object
 * (standard and custom), read by UID, by value, as filtered and ordered pages,
 * as children of many parents at once, or as a whole answer's JSON; and the
 * tenant's named sequences.
 *
 * Order, part of every list's contract (`listRecords`, `listRelated`, the
 * lists of `readJson`): values order as EQL compares them
 * (api/eql/compare-values.ts): numbers and decimals by value, text by Unicode
 * code point (never by a locale's collation), booleans false before true,
 * dates, times and datetimes chronologically. NULL is the lowest value,
 * whatever the direction: first in an `ASC` term, last in a `DESC` one, and
 * the same in keyset positions (`ListQuery.after`) and through lookup paths
 * (a record whose reference is empty sorts as if the looked-up value were NULL).
 * An engine whose default differs (PostgreSQL puts NULLs last in `ASC`) says
 * so in each ORDER BY.
 */
import type { CheckedFilter } from "../../eql/checked-filter.ts";
import type { OrderTerm } from "../../eql/parse-order-by.ts";
import type { FieldDef, ObjectDef } from "../../model/catalogue.ts";
import type { FieldValue, RecordValues } from "../../model/record-values.ts";
import type { ReadNode, ReadValue } from "../read-tree.ts";

/**
 * A to-one lookup read together with the records (a LEFT JOIN), instead of by a second query:
 * the records' `reference`, and the fields of its `target` to read (UID among them).
 */
export interface JoinedLookup {
  reference: FieldDef;
  target: ObjectDef;
  fields: readonly FieldDef[];
}

/**
 * Where a record read with joined lookups carries what they found, by reference field name:
 * the target record, or null when the reference is empty or points at nothing.
 */
export const LOOKUPS: unique symbol = Symbol("joined lookups");
export type WithLookups = RecordValues & { [LOOKUPS]?: Record<string, RecordValues | null> };

/**
 * A page of records: filtered, ordered (see the order above; UID last), after a keyset position,
 * skipping `offset`, at most `limit`.
 */
export interface ListQuery {
  filter: CheckedFilter | null;
  /** Never empty: ends with `UID ASC`, as `parseOrderBy` makes it, so that pages never overlap. */
  order: readonly OrderTerm[];
  /** Sort-key values (`ListedRecord.sortKey`) of the row to start after (from a cursor), or null. */
  after: readonly (string | number | null)[] | null;
  offset: number;
  limit: number;
  /** What NOW() means, ms since the epoch. */
  now: number;
  /** Read only these fields (callers include UID); every field when absent. */
  fields?: readonly FieldDef[];
  /** To-one lookups to read in the same statement; what they found is under `LOOKUPS`. */
  lookups?: readonly JoinedLookup[];
}

/** A listed record with its sort-key values (what its cursor encodes; see `RecordReader.listRecords`). */
export interface ListedRecord {
  values: RecordValues;
  sortKey: (string | number | null)[];
}

/** Records related to several parents at once: children whose `reference` points at one of `parentUids`. */
export interface RelatedQuery {
  filter: CheckedFilter | null;
  order: readonly OrderTerm[];
  /** At most this many children per parent. */
  limit: number;
  now: number;
  /** Read only these fields (callers include UID; the reference is read all the same); every field when absent. */
  fields?: readonly FieldDef[];
  /** To-one lookups to read in the same statement. */
  lookups?: readonly JoinedLookup[];
}

/** A tenant's named sequence and the last value it handed out. */
export interface SequenceValue {
  name: string;
  value: number;
}

/** Reads of records. */
export interface RecordReader {
  /**
   * The records of `object` with these UIDs (those that exist, in no particular order), with only
   * `fields` when given (callers include UID). Values come back as written (record-values.ts).
   */
  findRecords(
    tenantId: string,
    object: ObjectDef,
    uids: readonly string[],
    fields?: readonly FieldDef[],
  ): Promise<RecordValues[]>;
  /** A record (every field) whose `field` equals `value` (not null), other than `exceptUid`; null when none. */
  findRecordByValue(
    tenantId: string,
    object: ObjectDef,
    field: FieldDef,
    value: FieldValue,
    exceptUid?: string,
  ): Promise<RecordValues | null>;
  /** How many records of `source` point at `uid` through its reference `field`. */
  countReferencing(tenantId: string, source: ObjectDef, field: FieldDef, uid: string): Promise<number>;
  /**
   * A page of the records of `object` the filter keeps (see ListQuery), in order, each with its
   * sort-key values: one per order term, what the engine sorted by, handed back as `after` to go on
   * after the record (JSON values, opaque otherwise: cursors carry them to clients and back).
   */
  listRecords(tenantId: string, object: ObjectDef, query: ListQuery): Promise<ListedRecord[]>;
  /** How many records of `object` the filter keeps (all of them when null); NOW() means `now`. */
  countRecords(
    tenantId: string,
    object: ObjectDef,
    filter: CheckedFilter | null,
    now: number,
  ): Promise<number>;
  /**
   * One query for all parents: the children of `object` whose `reference` is in `parentUids`, the
   * first `query.limit` of each parent in the query's order, grouped by parent in no particular
   * parent order.
   */
  listRelated(
    tenantId: string,
    object: ObjectDef,
    reference: FieldDef,
    parentUids: readonly string[],
    query: RelatedQuery,
  ): Promise<RecordValues[]>;
  /**
   * The JSON text of the answer `tree` describes, with `values` in its slots, read in one go.
   * Optional: an engine without it answers through the other reads. Throws when a record breaks
   * what the tree promises (a null where it says a value), so the caller can answer the long way.
   * With `catalogueVersion` (the version of the catalogue the tree was made from, not checked
   * against the store yet), null when the tenant's catalogue is at another version where the
   * answer would have been read; it may throw instead when the tree names storage that is gone.
   */
  readJson?(
    tenantId: string,
    tree: ReadNode,
    values: readonly ReadValue[],
    catalogueVersion?: number,
  ): Promise<string | null>;
  /** Copying a store: the tenant's sequences (`nextSequenceValue`) and the last value each handed out, by name. */
  exportSequences(tenantId: string): Promise<SequenceValue[]>;
}

/**
 * Writes of records and sequences (inside a unit of work).
 *
 * Constraints every engine keeps, whatever its native errors, as these typed errors
 * (common/errors.ts), so the domain sees the same failure from every engine:
 * - `UniqueViolationError`: a write would give a unique field (UID among them) a value another
 *   record of the object has. NULLs never clash.
 * - `ReferenceNotFoundError`: a write would make a reference name no record of its target object
 *   (`FieldDef.referenceTo`); a record may name itself.
 * - `ValidationError` (details naming the fields): text holding U+0000, from an engine whose text
 *   cannot store it (PostgreSQL); an engine that can (SQLite) keeps it as written.
 * The failed write keeps nothing; the unit of work is then expected to throw (an engine may be
 * unable to go on with it). The domain checks first, for its own messages; these hold against a
 * check it missed and against concurrent units of work. Deleting a record does not check what
 * refers to it: the caller counts that (`countReferencing`) in the same unit of work, which
 * serializability makes safe.
 */
export interface RecordWriter {
  /**
   * Inserts a record with all of `object`'s fields (absent ones null).
   * @throws UniqueViolationError, ReferenceNotFoundError (see above).
   */
  insertRecord(tenantId: string, object: ObjectDef, values: RecordValues): Promise<void>;
  /**
   * Inserts the record as `insertRecord` does unless another record holds its value of `key` (a
   * unique field, set): then nothing is written and that record (every field) is answered; null
   * once written. An upsert's insert, tried before any read of its key: on PostgreSQL a read of an
   * absent key locks its index page under SERIALIZABLE, and upserts of new neighbouring keys then
   * fail to serialize (../insert-looking-up-first.ts for engines that look the key up first).
   * @throws UniqueViolationError (another unique field, the UID), ReferenceNotFoundError.
   */
  insertUnlessTaken(
    tenantId: string,
    object: ObjectDef,
    values: RecordValues,
    key: FieldDef,
  ): Promise<RecordValues | null>;
  /**
   * Sets the given fields of the record `uid` (a missing record: nothing to set).
   * @throws UniqueViolationError, ReferenceNotFoundError (see above), for the given fields.
   */
  updateRecord(tenantId: string, object: ObjectDef, uid: string, values: RecordValues): Promise<void>;
  /** Deletes the record `uid` of `object`; a missing one is no error. */
  deleteRecord(tenantId: string, object: ObjectDef, uid: string): Promise<void>;
  /**
   * The next value (1, 2, ...) of the tenant's sequence `name`. Values of committed units of work
   * are never handed out again and grow in commit order; one a rolled-back unit took may be handed
   * out again or skipped (gaps are allowed).
   */
  nextSequenceValue(tenantId: string, name: string): Promise<number>;
  /**
   * Copying a store: inserts records of `object` as another store read them (every field, as
   * `listRecords` returns them: UIDs, system fields and generated names kept), with no change-log
   * entry and no reference check (a copy writes records before those they point at; the store it
   * copies kept its references).
   * @throws UniqueViolationError (see above); ValidationError for text the engine cannot store.
   */
  importRecords(tenantId: string, object: ObjectDef, records: readonly RecordValues[]): Promise<void>;
  /**
   * Copying a store: sets each of the tenant's sequences `name` to `value`, the last value handed
   * out, so `nextSequenceValue` goes on with `value + 1`.
   */
  importSequences(tenantId: string, sequences: readonly SequenceValue[]): Promise<void>;
}
