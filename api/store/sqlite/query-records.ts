/**
 * Read queries over an object's table: filtered (compiled EQL), ordered by
 * fields and lookup paths, keyset-paginated (NULLs sort first, as SQLite
 * does), and reverse lists for many parents in one statement (a window per
 * parent). Every value is bound; identifiers come from the catalogue.
 */
import type { Database } from "bun:sqlite";
import { BOUND_COUNT } from "../../../common/store/sqlite/bound-count.ts";
import type { CheckedFilter } from "../../eql/checked-filter.ts";
import { filterNeeds } from "../../eql/filter-needs.ts";
import type { OrderTerm } from "../../eql/parse-order-by.ts";
import type { FieldDef, ObjectDef } from "../../model/catalogue.ts";
import type { RecordValues } from "../../model/record-values.ts";
import {
  type JoinedLookup,
  type ListedRecord,
  LOOKUPS,
  type RecordReader,
  type WithLookups,
} from "../ports/records-port.ts";
import type { ReadNode } from "../read-tree.ts";
import { buildPlan, keysetCondition, type ListPlan, orderClause } from "../sql/list-plan.ts";
import { quoteIdent } from "../sql/quote-ident.ts";
import { type RenderedRead, renderReadSql } from "../sql/render-read.ts";
import type { ColumnValue } from "./record-codec.ts";
import { decodeColumns } from "./record-session.ts";
import { sqliteJson } from "./render-json.ts";
import { sqliteDialect } from "./sqlite-dialect.ts";

type QueryMethods = Required<Pick<RecordReader, "listRecords" | "countRecords" | "listRelated" | "readJson">>;

const CATALOGUE_VERSION = "SELECT version FROM catalogue_versions WHERE tenant_id = ?";
/**
 * Rows are read as arrays (bun:sqlite's `values()`, cheaper than objects): the read shape's
 * columns, then the sort keys not among them. Never bigints or blobs: no column holds either.
 */
type Row = ColumnValue[];

const BASE = "r";

type Plan = ListPlan<ColumnValue>;
const NO_FILTER = {};
const plans = new WeakMap<readonly OrderTerm[], WeakMap<object, Plan>>();
const readsNow = new WeakMap<CheckedFilter, boolean>();
const NO_ORDER: readonly OrderTerm[] = [];

/**
 * The plan of a filter and an order, built once per pair: the resolvers hand the same checked filter
 * and order objects back for the same texts. A filter reading NOW() is planned afresh each time.
 */
function plan(
  tableRef: (object: ObjectDef) => string,
  filter: CheckedFilter | null,
  order: readonly OrderTerm[],
  now: number,
): Plan {
  if (filter && !readsNow.has(filter)) readsNow.set(filter, filterNeeds(filter).usesNow);
  if (filter && readsNow.get(filter)) return buildPlan(sqliteDialect, tableRef, filter, order, now);
  let byFilter = plans.get(order);
  if (!byFilter) {
    byFilter = new WeakMap();
    plans.set(order, byFilter);
  }
  let cached = byFilter.get(filter ?? NO_FILTER);
  if (!cached) {
    cached = buildPlan(sqliteDialect, tableRef, filter, order, now);
    byFilter.set(filter ?? NO_FILTER, cached);
  }
  return cached;
}

const withReferences = new WeakMap<readonly FieldDef[], Map<FieldDef, readonly FieldDef[]>>();

/** `fields` with `reference` among them: children are grouped by it. The same array for the same input. */
function withReference(fields: readonly FieldDef[], reference: FieldDef): readonly FieldDef[] {
  if (fields.includes(reference)) return fields;
  const byReference = withReferences.get(fields) ?? new Map<FieldDef, readonly FieldDef[]>();
  withReferences.set(fields, byReference);
  let extended = byReference.get(reference);
  if (!extended) {
    extended = [...fields, reference];
    byReference.set(reference, extended);
  }
  return extended;
}

/** The first `limit` rows of each parent, from rows ordered by parent. */
function capPerParent(rows: Row[], column: number, limit: number): Row[] {
  const kept: Row[] = [];
  let parent: ColumnValue | undefined;
  let count = 0;
  for (const row of rows) {
    if (row[column] !== parent) {
      parent = row[column];
      count = 0;
    }
    if (++count <= limit) kept.push(row);
  }
  return kept;
}

export function createQuerySession(
  db: Database,
  tableRef: (tenantId: string, object: ObjectDef) => string,
): QueryMethods {
  // Each tree's statement text, per tenant (a tree is made from one tenant's catalogue; table names are the store's).
  // Prepared through `db.query`, whose cache is keyed by the text: trees alike but for their values share one.
  const rendered = new WeakMap<ReadNode, Map<string, RenderedRead<ColumnValue>>>();
  const renderedFor = (tenantId: string, tree: ReadNode) => {
    const byTenant = rendered.get(tree) ?? new Map<string, RenderedRead<ColumnValue>>();
    rendered.set(tree, byTenant);
    let read = byTenant.get(tenantId);
    if (!read) {
      read = renderReadSql(tree, (object) => tableRef(tenantId, object), sqliteDialect, sqliteJson);
      byTenant.set(tenantId, read);
    }
    return read;
  };

  return {
    async readJson(tenantId, tree, values, catalogueVersion) {
      // The version and the answer read in one synchronous stretch, on the reader's snapshot of this
      // turn (sqlite-store.ts): no commit comes between them.
      if (catalogueVersion !== undefined) {
        const row = db.query<{ version: number }, [string]>(CATALOGUE_VERSION).get(tenantId);
        if ((row?.version ?? 0) !== catalogueVersion) return null;
      }
      const read = renderedFor(tenantId, tree);
      const params = read.params.map((param) =>
        "slot" in param ? (values[param.slot] ?? null) : param.value,
      );
      const row = db.query(read.sql).values(...(params as ColumnValue[]))[0] as [string] | undefined;
      return row?.[0] as string;
    },

    async listRecords(tenantId, object, query) {
      const p = plan((o) => tableRef(tenantId, o), query.filter, query.order, query.now);
      const keyset = query.after
        ? keysetCondition(sqliteDialect, p.keys, query.order, query.after)
        : { sql: "1", params: [] };
      const read = readShape(query.fields ?? object.fields, query.lookups, tenantId, (o) =>
        tableRef(tenantId, o),
      );
      const statement = listStatement(p, read, tableRef(tenantId, object), query.order);
      const sql = query.after ? statement.after(keyset.sql) : statement.firstPage;
      const rows = db
        .query<Row, ColumnValue[]>(sql)
        .values(...p.params, ...keyset.params, query.limit, query.offset) as Row[];
      const { keyAt } = statement;
      return rows.map(
        (row): ListedRecord => ({ values: read.decode(row), sortKey: keyAt.map((at) => row[at] ?? null) }),
      );
    },

    async countRecords(tenantId, object, filter, now) {
      const p = plan((o) => tableRef(tenantId, o), filter, NO_ORDER, now);

      const sql = `SELECT count(*) AS n FROM ${tableRef(tenantId, object)} ${BASE} ${p.joins.join(" ")} WHERE ${p.where}`;
      return db.query<{ n: number }, ColumnValue[]>(sql).get(...p.params)?.n ?? 0;
    },

    async listRelated(tenantId, object, reference: FieldDef, parentUids, query) {
      if (parentUids.length === 0 || query.limit === 0) return [];
      const p = plan((o) => tableRef(tenantId, o), query.filter, query.order, query.now);
      const fk = `${BASE}.${quoteIdent(reference.mapping)}`;
      const fields = withReference(query.fields ?? object.fields, reference);
      const read = readShape(fields, query.lookups, tenantId, (o) => tableRef(tenantId, o));
      const from = `FROM ${tableRef(tenantId, object)} ${BASE} ${p.joins.join(" ")} ${read.joins}
          WHERE ${fk} IN (${parentUids.map(() => "?").join(", ")}) AND (${p.where})`;
      const order = orderClause(sqliteDialect, p.keys, query.order);
      // Parents mostly have few children: read them all in one ordered pass, bounded by
      // parents × limit, and cap each parent here. Only past that bound does SQLite number
      // each parent's children (a window over all of them, the costlier statement).
      const bound = parentUids.length * query.limit;
      const all = db
        .query<Row, ColumnValue[]>(
          `SELECT ${read.columns} ${from} ORDER BY ${fk}, ${order} LIMIT ${BOUND_COUNT}`,
        )
        .values(...parentUids, ...p.params, bound + 1) as Row[];
      const rows =
        all.length <= bound
          ? capPerParent(all, fields.indexOf(reference), query.limit)
          : (db
              .query<Row, ColumnValue[]>(
                `SELECT * FROM (SELECT ${read.columns}, ROW_NUMBER() OVER (PARTITION BY ${fk} ORDER BY ${order}) AS __rn ${from})
                 WHERE __rn <= ? ORDER BY __rn`,
              )
              .values(...parentUids, ...p.params, query.limit) as Row[]);
      return rows.map(read.decode);
    },
  };
}

interface ListStatement {
  /** The statement of a first page (no cursor). */
  firstPage: string;
  /** The statement of a page after a cursor, given the cursor's condition. */
  after: (keyset: string) => string;
  /** Where each sort key is in a row: among the shape's columns, or selected after them. */
  keyAt: number[];
}

const listStatements = new WeakMap<Plan, WeakMap<ReadShape, ListStatement>>();

/** The text of a list's statement, built once per plan and read shape (both belong to one tenant). */
function listStatement(p: Plan, read: ReadShape, table: string, order: readonly OrderTerm[]): ListStatement {
  const byShape = listStatements.get(p) ?? new WeakMap<ReadShape, ListStatement>();
  listStatements.set(p, byShape);
  let statement = byShape.get(read);
  if (!statement) {
    const extra: string[] = [];
    const keyAt = p.keys.map((key) => {
      const at = read.columnAt.get(key);
      if (at !== undefined) return at;
      extra.push(key);
      return read.width + extra.length - 1;
    });
    const head = `SELECT ${[read.columns, ...extra].join(", ")} FROM ${table} ${BASE} ${p.joins.join(" ")} ${read.joins}`;
    const tail = `ORDER BY ${orderClause(sqliteDialect, p.keys, order)} LIMIT ${BOUND_COUNT} OFFSET ${BOUND_COUNT}`;
    const after = (keyset: string) => `${head} WHERE (${p.where}) AND ${keyset} ${tail}`;
    statement = { firstPage: after("1"), after, keyAt };
    byShape.set(read, statement);
  }
  return statement;
}

interface ReadShape {
  /** The select list: the fields' columns, then the joined lookups' (`l<i>.<mapping>`). */
  columns: string;
  /** Where each of the fields' columns (`r."<mapping>"`) is in a row. */
  columnAt: ReadonlyMap<string, number>;
  /** The LEFT JOINs of the lookups. */
  joins: string;
  /** How many columns `columns` selects. */
  width: number;
  /** A row → record values, carrying what its lookups found (see LOOKUPS). */
  decode: (row: Row) => RecordValues;
}

const NO_LOOKUPS: readonly JoinedLookup[] = [];
const shapes = new WeakMap<readonly FieldDef[], WeakMap<readonly JoinedLookup[], Map<string, ReadShape>>>();

/** How a query reads `fields` and `lookups` of a tenant's tables; built once per field list, lookup list and tenant. */
function readShape(
  fields: readonly FieldDef[],
  lookups: readonly JoinedLookup[] = NO_LOOKUPS,
  tenantId: string,
  tableRef: (object: ObjectDef) => string,
): ReadShape {
  const byLookups = shapes.get(fields) ?? new WeakMap<readonly JoinedLookup[], Map<string, ReadShape>>();
  shapes.set(fields, byLookups);
  const byTenant = byLookups.get(lookups) ?? new Map<string, ReadShape>();
  byLookups.set(lookups, byTenant);
  let shape = byTenant.get(tenantId);
  if (!shape) {
    // Each lookup's columns follow the record's; its UID column tells whether it found a record.
    const starts: number[] = [];
    let width = fields.length;
    for (const lookup of lookups) {
      starts.push(width);
      width += lookup.fields.length;
    }
    const uidAt = lookups.map(
      (lookup, i) => (starts[i] as number) + lookup.fields.findIndex((field) => field.type === "id"),
    );
    const columns = lookups.flatMap(({ fields: read }, i) =>
      read.map((field) => `l${i}.${quoteIdent(field.mapping)}`),
    );
    const joins = lookups.map(
      ({ reference, target }, i) =>
        `LEFT JOIN ${tableRef(target)} l${i} ON l${i}.uid = ${BASE}.${quoteIdent(reference.mapping)}`,
    );
    const decode = (row: Row): RecordValues => {
      const values = decodeColumns(fields, row, 0);
      if (lookups.length === 0) return values;
      const found: Record<string, RecordValues | null> = {};
      lookups.forEach((lookup, i) => {
        found[lookup.reference.name] =
          row[uidAt[i] as number] == null ? null : decodeColumns(lookup.fields, row, starts[i] as number);
      });
      (values as WithLookups)[LOOKUPS] = found;
      return values;
    };
    const own = fields.map((field) => `${BASE}.${quoteIdent(field.mapping)}`);
    shape = {
      columns: [...own, ...columns].join(", "),
      columnAt: new Map(own.map((column, i) => [column, i])),
      joins: joins.join(" "),
      width,
      decode,
    };
    byTenant.set(tenantId, shape);
  }
  return shape;
}
