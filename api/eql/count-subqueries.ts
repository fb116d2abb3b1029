/**
 * Filter text → how many sub-queries it holds, for pricing a query before its filters are checked
 * (api/graphql/document-limits.ts). Counts what the parser reads as one: `(` then `SELECT`. Pure.
 */
import { type Token, tokenize } from "./lexer.ts";

const isSubqueryStart = (token: Token, next: Token | undefined) =>
  token.kind === "punct" &&
  token.source === "(" &&
  next?.kind === "ident" &&
  next.source.toUpperCase() === "SELECT";

/** The sub-queries in `text`; 0 for a text that does not tokenize (checking the filter refuses it). */
export function countSubqueries(text: string): number {
  let tokens: Token[];
  try {
    tokens = tokenize(text);
  } catch {
    return 0;
  }
  return tokens.filter((token, i) => isSubqueryStart(token, tokens[i + 1])).length;
}
