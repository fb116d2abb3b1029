/**
 * How the MongoDB engine compares names regardless of case (tenants, usernames, custom objects and
 * fields, webhooks): their unique indexes are on a folded copy (`nameKey`, `usernameKey`) made by
 * this one function, as SQLite's NOCASE and PostgreSQL's lower() under the C collation compare them.
 */

/** `text` with the ASCII letters A–Z lowered and every other character as it is. */
export function foldAsciiCase(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}
