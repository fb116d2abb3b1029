/**
 * PostgreSQL's spelling of EQL (sql-dialect.ts) over the columns of
 * record-codec.ts: text in `COLLATE "C"` columns, so comparisons and ORDER BY
 * go by code point and `ILIKE` folds ASCII letters only, as EQL's LIKE does
 * (under any other collation `'É' ILIKE 'é'` holds); decimals (numeric) read
 * as `float8`, as EQL compares numbers; multipicklists are `text[]`, searched
 * with `&&`; null-safe equality is `IS NOT DISTINCT FROM`; NULLs sort lowest
 * only when told (`ASC NULLS FIRST`, `DESC NULLS LAST`), PostgreSQL's default
 * being the opposite.
 *
 * Values are bound untyped by Bun's client when they are strings, and take
 * their type from the column they meet (every placeholder the compilers write
 * faces a column); numbers are bound as int4/int8 when whole, float8
 * otherwise, which a bigint column meets as EQL does (both exact below 2^53).
 */
import type { SqlDialect } from "../sql/sql-dialect.ts";

/** What Bun's SQL client binds for the compilers' placeholders. */
export type PostgresValue = string | number | boolean | null;

export const postgresDialect: SqlDialect<PostgresValue> = {
  bindValue: (value, valueClass) => (valueClass === "number" ? Number(value) : value),
  placeholder: () => "?",
  comparable: (column, field) => (field.type === "decimal" ? `${column}::float8` : column),
  // A boolean key reads back as 0/1, the cursor's kinds of value; it orders as false < true all the same.
  sortKey: (column, field) =>
    field.type === "boolean" ? `${column}::int` : postgresDialect.comparable(column, field),
  nullSafe: { equal: "IS NOT DISTINCT FROM", notEqual: "IS DISTINCT FROM" },
  // E'\\' is one backslash whatever standard_conforming_strings says.
  like: (subject, pattern) => `${subject} ILIKE ${pattern} ESCAPE E'\\\\'`,
  // NULL && … is NULL: an absent multipicklist leaves the test unknown, as EQL wants.
  includesAny: (list, values) => `${list} && ARRAY[${values.join(", ")}]::text[]`,
  literals: { true: "TRUE", false: "FALSE", unknown: "NULL::boolean" },
  // PostgreSQL puts NULLs last ascending; EQL puts them lowest. A B-tree index (the primary key's)
  // serves `ASC`/`DESC` but not `ASC NULLS FIRST`, so a key that is never NULL is ordered plainly:
  // the same order, read from the index instead of a sort of the whole table.
  orderTerm: (key, direction, neverNull) =>
    neverNull
      ? `${key} ${direction}`
      : `${key} ${direction === "ASC" ? "ASC NULLS FIRST" : "DESC NULLS LAST"}`,
  statement: numberPlaceholders,
};

/**
 * `?` → `$1, $2, …` in textual order, outside string literals (`'…'`, `E'…'`) and quoted
 * identifiers (`"…"`). The compilers write no other `?` (no jsonb `?` operators, no comments,
 * no dollar quoting), so this is the whole of the statement's placeholders.
 */
export function numberPlaceholders(text: string): string {
  const pieces = splitAtPlaceholders(text);
  return pieces.reduce((numbered, piece, i) => `${numbered}$${i}${piece}`);
}

/** The text between placeholders (`?` outside quotes, as above): one more piece than placeholders. */
export function splitAtPlaceholders(text: string): string[] {
  const pieces: string[] = [];
  let piece = "";
  let i = 0;
  while (i < text.length) {
    const char = text[i] as string;
    if (char === "?") {
      pieces.push(piece);
      piece = "";
      i++;
    } else if (char === "'" || char === '"') {
      const escapes = char === "'" && /[eE]/.test(text[i - 1] ?? "") && !/\w/.test(text[i - 2] ?? "");
      const end = closingQuote(text, i, char, escapes);
      piece += text.slice(i, end);
      i = end;
    } else {
      piece += char;
      i++;
    }
  }
  pieces.push(piece);
  return pieces;
}

/** The index after the quote closing the one at `open` (a doubled quote is no end; `\` escapes in E'…'). */
function closingQuote(text: string, open: number, quote: string, escapes: boolean): number {
  let i = open + 1;
  while (i < text.length) {
    if (escapes && text[i] === "\\") i += 2;
    else if (text[i] === quote && text[i + 1] === quote) i += 2;
    else if (text[i] === quote) return i + 1;
    else i++;
  }
  return text.length;
}
