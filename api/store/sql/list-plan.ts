/**
 * The pieces of a statement over a list of records, in a SQL dialect: the
 * FROM clause's joins and WHERE (a compiled filter), the sort keys of an
 * order, the ORDER BY (NULLs lowest) and the keyset condition of a page after
 * a cursor, over a table alias of the caller's choosing (so the pieces nest in
 * sub-queries).
 */

import type { CheckedFilter } from "../../eql/checked-filter.ts";
import type { OrderTerm } from "../../eql/parse-order-by.ts";
import type { ObjectDef } from "../../model/catalogue.ts";
import { compileFilter } from "./compile-filter.ts";
import { quoteIdent } from "./quote-ident.ts";
import type { SqlDialect } from "./sql-dialect.ts";

/** The pieces `buildPlan` makes; `params` are the WHERE's values, in order. */
export interface ListPlan<V> {
  /** LEFT JOINs of the filter's and the order's lookup paths. */
  joins: string[];
  /** A boolean expression (the dialect's true without a filter). */
  where: string;
  params: V[];
  /** Each order term's sort key. */
  keys: string[];
}

/**
 * FROM clause pieces for a filter and an order over the table aliased `alias`: the joins (the
 * filter's `<alias>_<n>`, the order's lookup paths `<alias>o<n>`), the WHERE text and its values,
 * and the sort keys' SQL. `tableRef` gives a table's reference in SQL (quoted; see SqlFilterOptions).
 */
export function buildPlan<V>(
  dialect: SqlDialect<V>,
  tableRef: (object: ObjectDef) => string,
  filter: CheckedFilter | null,
  order: readonly OrderTerm[],
  now: number,
  alias = "r",
): ListPlan<V> {
  const compiled = filter ? compileFilter(filter, dialect, { tableRef, alias, now }) : null;
  const joins = [...(compiled?.joins ?? [])];
  const joined = new Map<string, string>();
  const keys = order.map((term) => {
    let from = alias;
    let path = "";
    for (const hop of term.operand.hops) {
      path += `.${hop.reference.name}`;
      let next = joined.get(path);
      if (!next) {
        next = `${alias}o${joined.size}`;
        joined.set(path, next);
        joins.push(
          `LEFT JOIN ${tableRef(hop.target)} ${next} ON ${next}.uid = ${from}.${quoteIdent(hop.reference.mapping)}`,
        );
      }
      from = next;
    }
    return dialect.sortKey(`${from}.${quoteIdent(term.operand.field.mapping)}`, term.operand.field);
  });
  return {
    joins,
    where: compiled?.where ?? dialect.literals.true,
    params: compiled?.params ?? [],
    keys,
  };
}

/** `ORDER BY` text of sort keys in the order's directions, NULLs lowest. */
export const orderClause = <V>(dialect: SqlDialect<V>, keys: string[], order: readonly OrderTerm[]) =>
  keys
    .map((key, i) => {
      const term = order[i];
      return dialect.orderTerm(
        key,
        term?.direction === "DESC" ? "DESC" : "ASC",
        term ? isOwnUid(term) : false,
      );
    })
    .join(", ");

/** The term orders by the listed record's own UID (no lookup): never NULL. */
const isOwnUid = (term: OrderTerm) => term.operand.hops.length === 0 && term.operand.field.type === "id";

/** `(k1, k2, ...) after (v1, v2, ...)` in the order's directions, NULL lowest; `values` are sort keys read back. */
export function keysetCondition<V>(
  dialect: SqlDialect<V>,
  keys: string[],
  order: readonly OrderTerm[],
  values: readonly V[],
): { sql: string; params: V[] } {
  const params: V[] = [];
  const greater = (key: string, value: V | null, descending: boolean) => {
    if (value === null) return descending ? dialect.literals.false : `${key} IS NOT NULL`;
    params.push(value);
    return descending ? `(${key} < ? OR ${key} IS NULL)` : `${key} > ?`;
  };
  const equal = (key: string, value: V | null) => {
    if (value === null) return `${key} IS NULL`;
    params.push(value);
    return `${key} = ?`;
  };
  const alternatives = keys.map((key, i) => {
    const parts: string[] = [];
    for (let j = 0; j < i; j++) parts.push(equal(keys[j] as string, values[j] ?? null));
    parts.push(greater(key, values[i] ?? null, order[i]?.direction === "DESC"));
    return `(${parts.join(" AND ")})`;
  });
  return { sql: `(${alternatives.join(" OR ")})`, params };
}
