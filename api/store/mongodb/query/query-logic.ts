/**
 * Query documents combined: `$and`/`$or` that flatten nested ones of their kind (the server refuses
 * match trees deeper than 100 levels, and EQL allows 64 levels of parentheses, so every level
 * saved counts) and fold the constants.
 */
import type { Document } from "mongodb";

/** Matches no document. */
export const NEVER: Document = Object.freeze({ $expr: false });
/** Matches every document. */
export const ALWAYS: Document = Object.freeze({});

const isNever = (query: Document) => query === NEVER;
const isAlways = (query: Document) => query === ALWAYS;

/** The operands of `query` if it is exactly `{[operator]: [...]}`, else `[query]`. */
function operandsOf(query: Document, operator: "$and" | "$or"): Document[] {
  const keys = Object.keys(query);
  return keys.length === 1 && keys[0] === operator ? (query[operator] as Document[]) : [query];
}

/** Documents every one of `queries` matches. */
export function allOf(queries: readonly Document[]): Document {
  if (queries.some(isNever)) return NEVER;
  const operands = queries.filter((query) => !isAlways(query)).flatMap((query) => operandsOf(query, "$and"));
  if (operands.length === 0) return ALWAYS;
  return operands.length === 1 ? (operands[0] as Document) : { $and: operands };
}

/** Documents at least one of `queries` matches. */
export function anyOf(queries: readonly Document[]): Document {
  if (queries.some(isAlways)) return ALWAYS;
  const operands = queries.filter((query) => !isNever(query)).flatMap((query) => operandsOf(query, "$or"));
  if (operands.length === 0) return NEVER;
  return operands.length === 1 ? (operands[0] as Document) : { $or: operands };
}
