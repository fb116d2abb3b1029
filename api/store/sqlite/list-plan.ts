/**
 * The pieces of a statement over a list of records: the FROM clause's joins
 * and WHERE (a compiled filter) and the sort keys of an order, over a table
 * alias of the caller's choosing (so the pieces nest in sub-queries).
 */

import type { CheckedFilter } from "../../eql/checked-filter.ts";
import type { OrderTerm } from "../../eql/parse-order-by.ts";
import type { ObjectDef } from "../../model/catalogue.ts";
import { compileFilter } from "./compile-filter.ts";
import { quoteIdent } from "./record-codec.ts";

/**
 * FROM clause pieces for a filter and an order over the table aliased `alias`: the joins (the
 * filter's `<alias>_<n>`, the order's lookup paths `<alias>o<n>`), the WHERE text and its values,
 * and the sort keys' SQL.
 */
export function buildPlan(
  tableOf: (object: ObjectDef) => string,
  filter: CheckedFilter | null,
  order: readonly OrderTerm[],
  now: number,
  alias = "r",
) {
  const compiled = filter ? compileFilter(filter, { tableOf, alias, now }) : null;
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
          `LEFT JOIN ${quoteIdent(tableOf(hop.target))} ${next} ON ${next}.uid = ${from}.${quoteIdent(hop.reference.mapping)}`,
        );
      }
      from = next;
    }
    const column = `${from}.${quoteIdent(term.operand.field.mapping)}`;
    return term.operand.field.type === "decimal" ? `CAST(${column} AS REAL)` : column;
  });
  return { joins, where: compiled?.where ?? "1", params: compiled?.params ?? [], keys };
}

/** `ORDER BY` text of sort keys in the order's directions. */
export const orderClause = (keys: string[], order: readonly OrderTerm[]) =>
  keys.map((key, i) => `${key} ${order[i]?.direction === "DESC" ? "DESC" : "ASC"}`).join(", ");
