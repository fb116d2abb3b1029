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

/**
 * A detail for each string of a decoded JSON value (a member's name included) that is not
 * well-formed, at its dotted path below `path` (`(body)` for the value itself); empty when all are.
 */
export function illFormedTextDetails(value: unknown, path = ""): ErrorDetail[] {
  const at = (key: string) => (path === "" ? key : `${path}.${key}`);
  if (typeof value === "string")
    return isWellFormedText(value) ? [] : [{ path: path || "(body)", message: ILL_FORMED_TEXT }];
  if (Array.isArray(value)) return value.flatMap((item, i) => illFormedTextDetails(item, at(String(i))));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, member]) =>
    isWellFormedText(key)
      ? illFormedTextDetails(member, at(key))
      : [{ path: at(key), message: `a member's name: ${ILL_FORMED_TEXT}` }],
  );
}
