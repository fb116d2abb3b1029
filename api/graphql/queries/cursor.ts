/**
 * Opaque keyset cursors: the sort-key values of a row, bound to the order they
 * were made for, base64url-encoded. A cursor stays valid while other rows come
 * and go, because it names a position in the order, not an index. A cursor
 * comes back from the client, so each of its values is checked against the
 * order term it continues before any store sees it.
 */
import { createHash } from "node:crypto";
import { ValidationError } from "../../../common/errors.ts";
import { parseDateText, parseTimeText } from "../../eql/literal-text.ts";
import type { OrderTerm } from "../../eql/parse-order-by.ts";
import { isUid } from "../../model/uid.ts";

export type SortKey = (string | number | null)[];

/** A short fingerprint of an order, so a cursor is not replayed under another. */
export function orderFingerprint(order: readonly OrderTerm[]): string {
  const text = order
    .map(
      (t) =>
        `${t.operand.hops.map((h) => h.reference.name).join(".")}.${t.operand.field.name} ${t.direction}`,
    )
    .join(",");
  return createHash("sha256").update(text).digest("base64url").slice(0, 8);
}

export function encodeCursor(key: SortKey, fingerprint: string): string {
  return Buffer.from(JSON.stringify([fingerprint, ...key])).toString("base64url");
}

/**
 * The sort key a cursor carries, each value checked against (and brought to the form the stores
 * compare for) the term of `order` it continues.
 * @throws ValidationError for a cursor this order did not make: another order's, of another
 * length, or with a value its term's field cannot hold.
 */
export function decodeCursor(cursor: string, fingerprint: string, order: readonly OrderTerm[]): SortKey {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    parsed = null;
  }
  if (Array.isArray(parsed) && parsed[0] === fingerprint && parsed.length === order.length + 1) {
    const key = order.map((term, i) => sortKeyValue(term, parsed[i + 1]));
    if (!key.includes(undefined)) return key as SortKey;
  }
  throw new ValidationError("invalid cursor: pass an endCursor this query (same orderBy) returned", [
    { path: "after", message: "not a cursor of this query" },
  ]);
}

/** PostgreSQL reads `bigint` keys (ints, durations, datetimes) back as decimal text. */
const WHOLE_NUMBER_TEXT = /^-?\d{1,16}$/;

/**
 * `value` as a sort key of `term` (the form every store reads back, or PostgreSQL's text of a
 * whole number), or undefined when the term's field cannot hold it: whole numbers are safe
 * integers (exact in every engine, inside PostgreSQL's bigint), decimals finite numbers (their
 * `float8` / REAL / double shadow), booleans 0 or 1, dates and times real ones, UIDs UIDs. NULL
 * fits every term but the record's own UID: a field, even a required one, is NULL in the records
 * that were there before it was added, and a lookup path is NULL where its reference is.
 */
function sortKeyValue(term: OrderTerm, value: unknown): string | number | null | undefined {
  const { field, hops, valueClass } = term.operand;
  if (value === null) return hops.length === 0 && field.type === "id" ? undefined : null;
  switch (valueClass) {
    case "text":
      if (typeof value !== "string") return undefined;
      return (field.type !== "id" && field.type !== "reference") || isUid(value) ? value : undefined;
    case "number":
      if (field.type === "decimal")
        return typeof value === "number" && Number.isFinite(value) ? value : undefined;
      return wholeNumber(value);
    case "datetime":
      return wholeNumber(value);
    case "boolean":
      return value === 0 || value === 1 ? value : undefined;
    case "date":
      return typeof value === "string" ? (parseDateText(value) ?? undefined) : undefined;
    case "time":
      return typeof value === "string" ? (parseTimeText(value) ?? undefined) : undefined;
    default:
      return undefined;
  }
}

function wholeNumber(value: unknown): number | undefined {
  const number =
    typeof value === "number"
      ? value
      : typeof value === "string" && WHOLE_NUMBER_TEXT.test(value)
        ? Number(value)
        : Number.NaN;
  return Number.isSafeInteger(number) ? number : undefined;
}
