/**
 * A read tree (../read-tree.ts) → one SQLite statement whose single value is
 * the answer's JSON text: objects by `json_object`, arrays by
 * `json_group_array` over an ordered sub-query (a page of a list, a record's
 * children: SQLite feeds an aggregate the rows of such a sub-query in its
 * order, which the tests hold it to; each of these sub-queries has a LIMIT,
 * which keeps SQLite from flattening it into the aggregate), lookups and records by UID as correlated sub-queries, each field
 * in its GraphQL form. Pure; built once per tree, the per-request values bound.
 *
 * Where the resolvers would answer with an error — a NOT NULL field found
 * empty, an Int past 32 bits, an Instant outside the years 0–9999 — the
 * statement fails instead (`json('!')` is malformed JSON), and the caller
 * answers the long way.
 */

import { BOUND_COUNT } from "../../../common/store/sqlite/bound-count.ts";
import type { OrderTerm } from "../../eql/parse-order-by.ts";
import type { FieldDef, ObjectDef } from "../../model/catalogue.ts";
import type { ReadList, ReadNode, Slot } from "../read-tree.ts";
import { buildPlan, orderClause } from "../sql/list-plan.ts";
import { quoteIdent } from "../sql/quote-ident.ts";
import type { ColumnValue } from "./record-codec.ts";
import { sqliteDialect } from "./sqlite-dialect.ts";

/** A bound value: a slot's (given per request) or a constant (a filter's). */
export type Param = { slot: Slot } | { value: ColumnValue };

export interface RenderedRead {
  sql: string;
  params: readonly Param[];
}

/** SQL text and the values of its `?`s, in order. */
class Frag {
  constructor(
    readonly text: string,
    readonly params: readonly Param[] = [],
  ) {}
}

/** Text and fragments joined, the fragments' values in the order they appear. */
function sql(strings: TemplateStringsArray, ...parts: (Frag | string)[]): Frag {
  let text = strings[0] as string;
  const params: Param[] = [];
  parts.forEach((part, i) => {
    if (part instanceof Frag) {
      text += part.text;
      params.push(...part.params);
    } else text += part;
    text += strings[i + 1] as string;
  });
  return new Frag(text, params);
}

function joined(frags: readonly Frag[], separator: string): Frag {
  return new Frag(
    frags.map((frag) => frag.text).join(separator),
    frags.flatMap((frag) => frag.params),
  );
}

const bound = (slot: Slot) => new Frag(BOUND_COUNT, [{ slot }]);
const text = (value: string) => `'${value.replaceAll("'", "''")}'`;

/** Malformed JSON: evaluating it fails the statement. */
const BROKEN = "json('!')";
/** Instants the GraphQL form (`toISOString`) writes with a four-digit year: 0000-01-01 to 9999-12-31. */
const FIRST_INSTANT = -62_167_219_200_000;
const LAST_INSTANT = 253_402_300_799_999;

/** A column's value in the GraphQL form of its field's scalar (scalars.ts). */
function scalar(field: FieldDef, column: string): string {
  switch (field.type) {
    case "boolean":
      return `json(CASE ${column} WHEN 1 THEN 'true' WHEN 0 THEN 'false' END)`;
    case "multipicklist":
      return `json(${column})`;
    case "int":
      return `CASE WHEN ${column} IS NULL OR ${column} BETWEEN -2147483648 AND 2147483647 THEN ${column} ELSE ${BROKEN} END`;
    case "datetime": {
      // Whole seconds and milliseconds apart, in integers: exact for instants before 1970 too.
      const ms = `((${column} % 1000 + 1000) % 1000)`;
      const seconds = `(${column} - ${ms}) / 1000`;
      return `CASE WHEN ${column} BETWEEN ${FIRST_INSTANT} AND ${LAST_INSTANT}
        THEN strftime('%Y-%m-%dT%H:%M:%S', ${seconds}, 'unixepoch') || printf('.%03dZ', ${ms})
        WHEN ${column} IS NOT NULL THEN ${BROKEN} END`;
    }
    default:
      // Text (strings, UIDs, dates, times, decimals) and whole numbers (durations): as stored.
      return column;
  }
}

/** Does `node` hold a node of `kind` in the same page (not inside a nested page)? */
function holds(node: ReadNode, kind: ReadNode["kind"]): boolean {
  if (node.kind === kind) return true;
  if (node.kind === "object") return node.entries.some(([, entry]) => holds(entry, kind));
  return node.kind === "rows" && holds(node.node, kind);
}

interface Scope {
  /** The alias whose columns are the current record's. */
  record: string;
  /** The page being rendered: its list, slots and the alias of its rows. */
  page?: { list: ReadList; first: Slot; offset: Slot; rows: string };
}

/** The statement rendering `tree`; `tableOf` names an object's table. */
export function renderReadSql(tree: ReadNode, tableOf: (object: ObjectDef) => string): RenderedRead {
  let aliases = 0;
  const alias = (prefix: string) => `${prefix}${aliases++}`;
  const table = (object: ObjectDef) => quoteIdent(tableOf(object));

  /** FROM and WHERE of `list` over alias `a`, and its ORDER BY. */
  const from = (list: ReadList, a: string, order: readonly OrderTerm[] = list.order) => {
    const plan = buildPlan(sqliteDialect, tableOf, list.filter, order, 0, a);
    const where = new Frag(
      plan.where,
      plan.params.map((value) => ({ value })),
    );
    return {
      from: sql`${table(list.object)} ${a} ${plan.joins.join(" ")} WHERE (${where})`,
      orderBy: orderClause(sqliteDialect, plan.keys, order),
    };
  };
  const column = (scope: Scope, field: FieldDef) => `${scope.record}.${quoteIdent(field.mapping)}`;

  function render(node: ReadNode, scope: Scope): Frag {
    switch (node.kind) {
      case "object": {
        const entries = node.entries.map(([key, entry]) => sql`${text(key)}, ${render(entry, scope)}`);
        return sql`json_object(${joined(entries, ", ")})`;
      }
      case "constant":
        return new Frag(typeof node.value === "boolean" ? `json('${node.value}')` : text(node.value));
      case "value": {
        const value = scalar(node.field, column(scope, node.field));
        return new Frag(node.nonNull ? `coalesce(${value}, ${BROKEN})` : value);
      }
      case "lookup": {
        const l = alias("l");
        const found = render(node.node, { record: l });
        return sql`json((SELECT ${found} FROM ${table(node.target)} ${l} WHERE ${l}.uid = ${column(scope, node.reference)}))`;
      }
      case "record": {
        const b = alias("b");
        const found = render(node.node, { record: b });
        return sql`json((SELECT ${found} FROM ${table(node.object)} ${b} WHERE ${b}.uid = ${new Frag("?", [{ slot: node.uid }])}))`;
      }
      case "related": {
        const [t, s] = [alias("t"), alias("s")];
        const list = from(node.list, t);
        const child = render(node.node, { record: s });
        const parent = `${t}.${quoteIdent(node.reference.mapping)} = ${scope.record}.uid`;
        return sql`json((SELECT json_group_array(${child}) FROM (
          SELECT ${t}.* FROM ${list.from} AND ${parent}
          ORDER BY ${list.orderBy} LIMIT ${bound(node.limit)}) ${s}))`;
      }
      case "page": {
        const [t, s] = [alias("t"), alias("s")];
        const page = { list: node.list, first: node.first, offset: node.offset, rows: s };
        const content = render(node.node, { record: s, page });
        if (!holds(node.node, "rows")) return sql`json((SELECT ${content}))`;
        const list = from(node.list, t);
        // Numbered from the list's start (before OFFSET), so a row's number is its offset + 1.
        const numbered = holds(node.node, "rowOffset")
          ? `, row_number() OVER (ORDER BY ${list.orderBy}) AS "#n"`
          : "";
        return sql`json((SELECT ${content} FROM (
          SELECT ${t}.*${numbered} FROM ${list.from}
          ORDER BY ${list.orderBy} LIMIT ${bound(node.first)} OFFSET ${bound(node.offset)}) ${s}))`;
      }
      case "rows": {
        pageOf(scope, node.kind);
        return sql`json_group_array(${render(node.node, scope)})`;
      }
      case "rowOffset":
        return new Frag(`(${pageOf(scope, node.kind).rows}."#n" - 1)`);
      case "hasMore": {
        const page = pageOf(scope, node.kind);
        const list = from(page.list, alias("h"), []);
        return sql`json(CASE WHEN EXISTS (SELECT 1 FROM ${list.from} LIMIT 1 OFFSET (${bound(page.offset)} + ${bound(page.first)})) THEN 'true' ELSE 'false' END)`;
      }
      case "hasPrevious":
        return sql`json(CASE WHEN ${bound(pageOf(scope, node.kind).offset)} > 0 THEN 'true' ELSE 'false' END)`;
      case "count": {
        const list = from(pageOf(scope, node.kind).list, alias("c"), []);
        return sql`(SELECT count(*) FROM ${list.from})`;
      }
    }
  }

  const rendered = render(tree, { record: "" });
  return { sql: `SELECT ${rendered.text}`, params: rendered.params };
}

function pageOf(scope: Scope, kind: string) {
  if (!scope.page) throw new Error(`a read tree's ${kind} must be inside a page`);
  return scope.page;
}
