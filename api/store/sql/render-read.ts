/**
 * A read tree (../read-tree.ts) → one statement whose single value is the
 * answer's JSON text, in an engine's SQL and JSON dialects. The walk is the
 * same for every SQL engine: objects in the tree's key order, arrays over an
 * ordered sub-query (a page of a list, a record's children, each with its
 * LIMIT), lookups and records by UID as correlated sub-queries, each field in
 * its GraphQL form. What differs (how an object, an array, a nested answer, a
 * truth value and a field's value are written, and what makes the statement
 * fail) is the `JsonDialect`'s. Pure; built once per tree, the per-request
 * values bound.
 *
 * Where the resolvers would answer with an error (a NOT NULL field found
 * empty, an Int past 32 bits, an Instant outside the years 0–9999), the
 * statement fails instead (`JsonDialect.broken`), and the caller answers the
 * long way.
 */

import type { OrderTerm } from "../../eql/parse-order-by.ts";
import type { FieldDef, ObjectDef } from "../../model/catalogue.ts";
import type { ReadList, ReadNode, Slot } from "../read-tree.ts";
import { buildPlan, orderClause } from "./list-plan.ts";
import { quoteIdent } from "./quote-ident.ts";
import type { SqlDialect } from "./sql-dialect.ts";
import { Frag, joined, type Param, sql, sqlText } from "./sql-fragment.ts";

/** How an engine writes a JSON answer in SQL. */
export interface JsonDialect {
  /** A JSON object of these entries, in this order (keys are plain text). */
  object<V>(entries: readonly (readonly [key: string, value: Frag<V>])[]): Frag<V>;
  /** A constant of the tree (`__typename`, a fixed boolean) as a JSON value. */
  constant(value: string | boolean): string;
  /** A column's value in the GraphQL form of its field's scalar; fails (`broken`) outside the scalar's range. */
  scalar(field: FieldDef, column: string): string;
  /** An expression whose evaluation fails the statement (never folded away at plan time). */
  readonly broken: string;
  /** A scalar sub-query (`select` is `SELECT …`) whose one value is JSON, as a JSON value. */
  nested<V>(select: Frag<V>): Frag<V>;
  /** The aggregate of `element` over the rows of an ordered sub-query, as a JSON array ([] for none); `order` is the rows' ORDER BY over their sort-key columns. */
  array<V>(element: Frag<V>, order: string): Frag<V>;
  /** Whether `array` orders by sort-key columns the sub-query must select (else it keeps the sub-query's order). */
  readonly ordersArrays: boolean;
  /** A condition as JSON true or false. */
  truth<V>(condition: Frag<V>): Frag<V>;
  /** A row count (LIMIT, OFFSET) bound from a slot, as a placeholder. */
  readonly boundCount: string;
  /** The statement selecting `answer` as JSON text. */
  statement<V>(answer: Frag<V>): Frag<V>;
}

export interface RenderedRead<V> {
  /** The finished statement, in the SQL dialect's placeholders. */
  sql: string;
  params: readonly Param<V>[];
}

/** Does `node` hold a node of `kind` in the same page (not inside a nested page)? */
function holds(node: ReadNode, kind: ReadNode["kind"]): boolean {
  if (node.kind === kind) return true;
  if (node.kind === "object") return node.entries.some(([, entry]) => holds(entry, kind));
  return node.kind === "rows" && holds(node.node, kind);
}

interface Page {
  list: ReadList;
  first: Slot;
  offset: Slot;
  /** The alias of the page's rows, and their ORDER BY over its sort-key columns. */
  rows: string;
  order: string;
}

interface Scope {
  /** The alias whose columns are the current record's. */
  record: string;
  /** The page being rendered. */
  page?: Page;
}

function pageOf(scope: Scope, kind: string): Page {
  if (!scope.page) throw new Error(`a read tree's ${kind} must be inside a page`);
  return scope.page;
}

/** The statement rendering `tree`; `tableRef` gives an object's table (SQL, quoted). */
export function renderReadSql<V>(
  tree: ReadNode,
  tableRef: (object: ObjectDef) => string,
  dialect: SqlDialect<V>,
  json: JsonDialect,
): RenderedRead<V> {
  let aliases = 0;
  const alias = (prefix: string) => `${prefix}${aliases++}`;
  const bound = (slot: Slot) => new Frag<V>(json.boundCount, [{ slot }]);

  /** FROM and WHERE of `list` over alias `a`, its ORDER BY, and its sort keys as columns named `"#k<i>"`. */
  const from = (list: ReadList, a: string, order: readonly OrderTerm[] = list.order) => {
    const plan = buildPlan(dialect, tableRef, list.filter, order, 0, a);
    const where = new Frag<V>(
      plan.where,
      plan.params.map((value) => ({ value })),
    );
    const keyed = json.ordersArrays ? plan.keys.map((key, i) => `, ${key} AS "#k${i}"`).join("") : "";
    return {
      from: sql<V>`${tableRef(list.object)} ${a} ${plan.joins.join(" ")} WHERE (${where})`,
      orderBy: orderClause(dialect, plan.keys, order),
      keyed,
      /** The ORDER BY of the sub-query's rows (alias `s`) by their key columns. */
      rowOrder: (s: string) =>
        orderClause(
          dialect,
          plan.keys.map((_, i) => `${s}."#k${i}"`),
          order,
        ),
    };
  };
  const column = (scope: Scope, field: FieldDef) => `${scope.record}.${quoteIdent(field.mapping)}`;

  function render(node: ReadNode, scope: Scope): Frag<V> {
    switch (node.kind) {
      case "object":
        return json.object(node.entries.map(([key, entry]) => [key, render(entry, scope)] as const));
      case "constant":
        return new Frag(json.constant(node.value));
      case "value": {
        const value = json.scalar(node.field, column(scope, node.field));
        return new Frag(node.nonNull ? `coalesce(${value}, ${json.broken})` : value);
      }
      case "lookup": {
        const l = alias("l");
        const found = render(node.node, { record: l });
        return json.nested(
          sql`SELECT ${found} FROM ${tableRef(node.target)} ${l} WHERE ${l}.uid = ${column(scope, node.reference)}`,
        );
      }
      case "record": {
        const b = alias("b");
        const found = render(node.node, { record: b });
        const uid = new Frag<V>("?", [{ slot: node.uid }]);
        return json.nested(sql`SELECT ${found} FROM ${tableRef(node.object)} ${b} WHERE ${b}.uid = ${uid}`);
      }
      case "related": {
        const [t, s] = [alias("t"), alias("s")];
        const list = from(node.list, t);
        const child = render(node.node, { record: s });
        const parent = `${t}.${quoteIdent(node.reference.mapping)} = ${scope.record}.uid`;
        return json.nested(sql`SELECT ${json.array(child, list.rowOrder(s))} FROM (
          SELECT ${t}.*${list.keyed} FROM ${list.from} AND ${parent}
          ORDER BY ${list.orderBy} LIMIT ${bound(node.limit)}) ${s}`);
      }
      case "page":
        return renderPage(node);
      case "rows": {
        const page = pageOf(scope, node.kind);
        return json.array(render(node.node, scope), page.order);
      }
      case "rowOffset":
        return new Frag(`(${pageOf(scope, node.kind).rows}."#n" - 1)`);
      case "hasMore": {
        const page = pageOf(scope, node.kind);
        const list = from(page.list, alias("h"), []);
        return json.truth(
          sql`EXISTS (SELECT 1 FROM ${list.from} LIMIT 1 OFFSET (${bound(page.offset)} + ${bound(page.first)}))`,
        );
      }
      case "hasPrevious":
        return json.truth(sql`${bound(pageOf(scope, node.kind).offset)} > 0`);
      case "count": {
        const list = from(pageOf(scope, node.kind).list, alias("c"), []);
        return sql`(SELECT count(*) FROM ${list.from})`;
      }
    }
  }

  function renderPage(node: Extract<ReadNode, { kind: "page" }>): Frag<V> {
    const [t, s] = [alias("t"), alias("s")];
    const list = from(node.list, t);
    const page = {
      list: node.list,
      first: node.first,
      offset: node.offset,
      rows: s,
      order: list.rowOrder(s),
    };
    const content = render(node.node, { record: s, page });
    if (!holds(node.node, "rows")) return json.nested(sql`SELECT ${content}`);
    // Numbered from the list's start (before OFFSET), so a row's number is its offset + 1.
    const numbered = holds(node.node, "rowOffset")
      ? `, row_number() OVER (ORDER BY ${list.orderBy}) AS "#n"`
      : "";
    return json.nested(sql`SELECT ${content} FROM (
          SELECT ${t}.*${numbered}${list.keyed} FROM ${list.from}
          ORDER BY ${list.orderBy} LIMIT ${bound(node.first)} OFFSET ${bound(node.offset)}) ${s}`);
  }

  const statement = json.statement(render(tree, { record: "" }));
  return { sql: dialect.statement(statement.text), params: statement.params };
}

/** A JSON object's entries as `key, value` pairs for a SQL object constructor. */
export const objectArguments = <V>(entries: readonly (readonly [string, Frag<V>])[]): Frag<V> =>
  joined(
    entries.map(([key, value]) => sql<V>`${sqlText(key)}, ${value}`),
    ", ",
  );
