/** Identifier quoting, the same in every SQL engine the store speaks to. */

/** Double-quotes an identifier for SQL (identifiers come from the catalogue, never from requests). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
