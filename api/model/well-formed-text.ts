/**
 * Text every engine stores as it was given: well-formed Unicode. A lone surrogate (half of a UTF-16
 * pair, U+D800–U+DFFF, which JSON's `\uD800` escapes can carry) has no UTF-8 form, so SQLite and
 * PostgreSQL would store U+FFFD in its place: a value changed behind the caller's back, and two
 * different values made one (a unique key taken by a value never written). Refused at each trust
 * boundary instead: request bodies (api/http/parse-body.ts), record values (api/records/validate-input.ts),
 * filter literals (api/eql/lexer.ts).
 */
import type { ErrorDetail } from "../../common/errors.ts";

/** What a value holding a lone surrogate is told. */
export const ILL_FORMED_TEXT =
  "text must be well-formed Unicode: a lone surrogate (U+D800 to U+DFFF) cannot be stored";

/** True when `text` holds no lone surrogate. */
export const isWellFormedText = (text: string): boolean => text.isWellFormed();

/** Where a value sits in a body: its member's name (or index) and its parent's place; null for the body. */
type Place = { key: string; parent: Place } | null;

const pathOf = (place: Place): string => {
  const keys: string[] = [];
  for (let at = place; at !== null; at = at.parent) keys.push(at.key);
  return keys.reverse().join(".") || "(body)";
};

/**
 * A detail for each string of a decoded JSON value (a member's name included) that is not
 * well-formed, at its dotted path (`(body)` for the value itself), in the body's order; empty when
 * all are. Walked without recursion, paths spelt only when needed: a body may nest as deep as its
 * parser allows.
 */
export function illFormedTextDetails(value: unknown): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const pending: { item: unknown; place: Place }[] = [{ item: value, place: null }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { item, place } = next;
    if (place !== null && !isWellFormedText(place.key)) {
      details.push({ path: pathOf(place), message: `a member's name: ${ILL_FORMED_TEXT}` });
    } else if (typeof item === "string") {
      if (!isWellFormedText(item)) details.push({ path: pathOf(place), message: ILL_FORMED_TEXT });
    } else if (item !== null && typeof item === "object") {
      const members = Array.isArray(item)
        ? item.map((v, i) => [String(i), v] as const)
        : Object.entries(item);
      for (let i = members.length - 1; i >= 0; i--) {
        const [key, member] = members[i] as readonly [string, unknown];
        pending.push({ item: member, place: { key, parent: place } });
      }
    }
  }
  return details;
}
