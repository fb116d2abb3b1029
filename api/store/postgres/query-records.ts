/**
 * Read queries over a tenant's tables: filtered (EQL compiled in PostgreSQL's
 * dialect), ordered by fields and lookup paths with NULLs lowest,
 * keyset-paginated; children of many parents in one statement (a LATERAL
 * sub-query per parent, each with its LIMIT, along the reference's index);
 * whole answers as JSON, checked against the catalogue version in the same
 * statement when asked (no round trip of its own), their numbers and the
 * filter's values written in so that a repeated read is planned once
 * (read-template.ts). Every other value is bound; identifiers come from the
 * catalogue.
 */

import { setNewest } from "../../../common/bounded-map.ts";
import type { BoundValue, Runner } from "../../../common/store/postgres/runner.ts";
import { sqlLiteral } from "../../../common/store/postgres/sql-literal.ts";
import type { CheckedFilter } from "../../eql/checked-filter.ts";
import { filterNeeds } from "../../eql/filter-needs.ts";
import type { OrderTerm } from "../../eql/parse-order-by.ts";
import type { FieldDef } from "../../model/catalogue.ts";
import type { ListedRecord, RecordReader } from "../ports/records-port.ts";
import type { ReadNode, ReadValue } from "../read-tree.ts";
import { buildPlan, keysetCondition, type ListPlan, orderClause } from "../sql/list-plan.ts";
import { quoteIdent } from "../sql/quote-ident.ts";
import { renderReadSql } from "../sql/render-read.ts";
import { type PostgresValue, postgresDialect } from "./postgres-dialect.ts";
import { BASE, type ReadShape, readShape } from "./read-shape.ts";
import { fillTemplate, type ReadTemplate, readTemplate } from "./read-template.ts";
import { postgresJson } from "./render-json.ts";
import { type SchemaLookup, tableRef } from "./tenant-schemas.ts";

type QueryMethods = Required<Pick<RecordReader, "listRecords" | "countRecords" | "listRelated" | "readJson">>;
type Plan = ListPlan<PostgresValue>;

const NO_FILTER = {};
const NO_ORDER: readonly OrderTerm[] = [];
const plans = new WeakMap<readonly OrderTerm[], WeakMap<object, Map<string, Plan>>>();
const readsNow = new WeakMap<CheckedFilter, boolean>();

/**
 * The plan of a filter and an order in a tenant's schema, built once per triple (the resolvers hand
 * the same checked filter and order objects back for the same texts). A filter reading NOW() is
 * planned afresh each time.
 */
function plan(schema: string, filter: CheckedFilter | null, order: readonly OrderTerm[], now: number): Plan {
  const build = () => buildPlan(postgresDialect, (object) => tableRef(schema, object), filter, order, now);
  if (filter && !readsNow.has(filter)) readsNow.set(filter, filterNeeds(filter).usesNow);
  if (filter && readsNow.get(filter)) return build();
  const byFilter = plans.get(order) ?? new WeakMap<object, Map<string, Plan>>();
  plans.set(order, byFilter);
  const bySchema = byFilter.get(filter ?? NO_FILTER) ?? new Map<string, Plan>();
  byFilter.set(filter ?? NO_FILTER, bySchema);
  let cached = bySchema.get(schema);
  if (!cached) {
    cached = build();
    bySchema.set(schema, cached);
  }
  return cached;
}

const withReferences = new WeakMap<readonly FieldDef[], Map<FieldDef, readonly FieldDef[]>>();

/** `fields` with `reference` among them (children are told apart by it); the same array for the same input. */
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

interface ListStatement {
  /** The statement of a first page (no cursor), numbered. */
  firstPage: string;
  /** The statement of a page after a cursor, given the cursor's condition, numbered. */
  after: (keyset: string) => string;
  /** Where each sort key is in a row: among the shape's columns, or selected after them. */
  keyAt: number[];
}

const listStatements = new WeakMap<Plan, WeakMap<ReadShape, ListStatement>>();

/** The text of a list's statement, built once per plan and read shape (both belong to one schema). */
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
    const tail = `ORDER BY ${orderClause(postgresDialect, p.keys, order)} LIMIT ? OFFSET ?`;
    const after = (keyset: string) =>
      postgresDialect.statement(`${head} WHERE (${p.where}) AND ${keyset} ${tail}`);
    statement = { firstPage: after("TRUE"), after, keyAt };
    byShape.set(read, statement);
  }
  return statement;
}

/**
 * A whole read answered only while the tenant's catalogue is at a version: the answer when the
 * version is `version` (the tenant `tenant`: both bound as `$1`, `$2`, the read's own parameters
 * numbered from `$3`, or both literals), else NULL, from one snapshot.
 */
const guardedRead = (read: string, tenant = "$1", version = "$2") =>
  `SELECT CASE WHEN coalesce((SELECT version FROM catalogue_versions WHERE tenant_id = ${tenant}), 0) = ${version}
    THEN (${read}) END`;

/** Runs of one statement text (in a while: the texts run last are counted) before it is prepared. */
const UNPREPARED_RUNS = 2;
/** Texts of one template (its numbers and guard differing) whose runs are counted. */
const COUNTED_TEXTS = 64;

/** The compilers' dialect, but leaving placeholders unnumbered: a whole read's are numbered per request (read-template.ts). */
const unnumbered = { ...postgresDialect, statement: (text: string) => text };

export function createQuerySession(db: Runner, schemas: SchemaLookup): QueryMethods {
  // Each tree's statement, per schema (a tree is made from one tenant's catalogue).
  const templates = new WeakMap<ReadNode, Map<string, ReadTemplate>>();
  const templateFor = (schema: string, tree: ReadNode) => {
    const bySchema = templates.get(tree) ?? new Map<string, ReadTemplate>();
    templates.set(tree, bySchema);
    let template = bySchema.get(schema);
    if (!template) {
      const read = renderReadSql(tree, (object) => tableRef(schema, object), unnumbered, postgresJson);
      template = readTemplate(read.sql, read.params);
      bySchema.set(schema, template);
    }
    return template;
  };

  // How often each text ran lately: one that repeats is prepared, a one-off (a filter's value seen
  // once) is planned and forgotten instead of kept by every connection that ran it. A text is known
  // by its template, its numbers and whether it is guarded: a short key, where the text is a few KB.
  const runs = new WeakMap<ReadTemplate, Map<string, number>>();
  const prepared = (template: ReadTemplate, key: string) => {
    const counts = runs.get(template) ?? new Map<string, number>();
    runs.set(template, counts);
    const count = (counts.get(key) ?? 0) + 1;
    setNewest(counts, key, count, COUNTED_TEXTS);
    return count > UNPREPARED_RUNS;
  };

  /**
   * Runs a whole read, guarded by the catalogue's version when given: prepared, its text bound, once
   * the same text ran twice lately; before that unprepared, every value written in.
   */
  const runWhole = (
    template: ReadTemplate,
    values: readonly ReadValue[],
    guard: { tenantId: string; version: number } | null,
  ) => {
    const read = fillTemplate(template, values, guard ? 2 : 0);
    if (prepared(template, `${guard ? "guarded" : "plain"} ${read.numbers}`))
      return guard
        ? db.values(guardedRead(read.sql), [guard.tenantId, guard.version, ...read.params])
        : db.values(read.sql, read.params);
    const literal = fillTemplate(template, values, 0, true).sql;
    return db.unprepared(
      guard ? guardedRead(literal, sqlLiteral(guard.tenantId), sqlLiteral(guard.version)) : literal,
    );
  };

  return {
    async readJson(tenantId, tree, values, catalogueVersion) {
      const template = templateFor(await schemas.schemaOf(tenantId), tree);
      const guard = catalogueVersion === undefined ? null : { tenantId, version: catalogueVersion };
      const [row] = await runWhole(template, values, guard);
      return (row?.[0] ?? null) as string | null;
    },

    async listRecords(tenantId, object, query) {
      const schema = await schemas.schemaOf(tenantId);
      const p = plan(schema, query.filter, query.order, query.now);
      const read = readShape(query.fields ?? object.fields, query.lookups, schema);
      const statement = listStatement(p, read, tableRef(schema, object), query.order);
      const keyset = query.after
        ? keysetCondition(postgresDialect, p.keys, query.order, query.after as PostgresValue[])
        : null;
      const sql = keyset ? statement.after(keyset.sql) : statement.firstPage;
      const params = [...p.params, ...(keyset?.params ?? []), query.limit, query.offset];
      const rows = await db.values(sql, params as BoundValue[]);
      const { keyAt } = statement;
      return rows.map(
        (row): ListedRecord => ({
          values: read.decode(row),
          sortKey: keyAt.map((at) => (row[at] ?? null) as string | number | null),
        }),
      );
    },

    async countRecords(tenantId, object, filter, now) {
      const schema = await schemas.schemaOf(tenantId);
      const p = plan(schema, filter, NO_ORDER, now);
      const sql = `SELECT count(*) AS n FROM ${tableRef(schema, object)} ${BASE} ${p.joins.join(" ")} WHERE ${p.where}`;
      const [row] = await db.rows<{ n: string }>(postgresDialect.statement(sql), p.params);
      return Number(row?.n ?? 0);
    },

    async listRelated(tenantId, object, reference: FieldDef, parentUids, query) {
      if (parentUids.length === 0 || query.limit === 0) return [];
      const schema = await schemas.schemaOf(tenantId);
      const p = plan(schema, query.filter, query.order, query.now);
      const read = readShape(withReference(query.fields ?? object.fields, reference), query.lookups, schema);
      // Named apart: a lookup's columns may have the names of the record's.
      const columns = read.selected.map((column, i) => `${column} AS "#${i}"`).join(", ");
      const sql = `SELECT c.* FROM (SELECT DISTINCT unnest(?::text[]) AS uid) parent
        CROSS JOIN LATERAL (
          SELECT ${columns} FROM ${tableRef(schema, object)} ${BASE} ${p.joins.join(" ")} ${read.joins}
          WHERE ${BASE}.${quoteIdent(reference.mapping)} = parent.uid AND (${p.where})
          ORDER BY ${orderClause(postgresDialect, p.keys, query.order)} LIMIT ?) c`;
      const params = [parentUids, ...p.params, query.limit];
      const rows = await db.values(postgresDialect.statement(sql), params as BoundValue[]);
      return rows.map(read.decode);
    },
  };
}
