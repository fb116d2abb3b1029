/**
 * Opaque keyset cursors: the sort-key values of a row, bound to the order they
 * were made for, base64url-encoded. A cursor stays valid while other rows come
 * and go, because it names a position in the order, not an index.
 */
import { createHash } from "node:crypto";
import { ValidationError } from "../../../common/errors.ts";
import type { OrderTerm } from "../../eql/parse-order-by.ts";

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

/** @throws ValidationError for a cursor this order did not make. */
export function decodeCursor(cursor: string, fingerprint: string, length: number): SortKey {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(parsed) && parsed[0] === fingerprint && parsed.length === length + 1) {
      const key = parsed.slice(1);
      if (key.every((v) => v === null || typeof v === "string" || typeof v === "number"))
        return key as SortKey;
    }
  } catch {
    // fall through
  }
  throw new ValidationError("invalid cursor: pass an endCursor this query (same orderBy) returned", [
    { path: "after", message: "not a cursor of this query" },
  ]);
}
