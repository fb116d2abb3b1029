/**
 * `orderBy` strings ("Start DESC, Region.Name ASC") → order terms over the
 * object's fields and lookup paths, `UID ASC` always last as the tie-breaker.
 * Pure; errors are FilterParseErrors / UnknownFieldErrors with positions.
 */

import type { Catalogue, ObjectDef } from "../model/catalogue.ts";
import type { Name } from "./ast.ts";
import type { FieldOperand } from "./checked-filter.ts";
import { resolveFieldPath } from "./resolve-path.ts";
import { expectedError, filterError, positioner, quote } from "./source-text.ts";

export type OrderDirection = "ASC" | "DESC";

export interface OrderTerm {
  operand: FieldOperand;
  direction: OrderDirection;
}

const MAX_ORDER_BY_LENGTH = 1000;
const MAX_TERMS = 8;
const TOKEN = /\s*(?:([A-Za-z_][A-Za-z0-9_]*)|(\.)|(,)|(\S))/y;

/** Parses and resolves `text` (null or empty: the default `UID ASC`). */
export function parseOrderBy(
  text: string | null | undefined,
  object: ObjectDef,
  catalogue: Catalogue,
): OrderTerm[] {
  const uid = resolveFieldPath(
    [{ name: "UID", position: { offset: 0, line: 1, column: 1 } }],
    object,
    catalogue,
    "record",
  );
  const terms: OrderTerm[] = [];
  const source = text ?? "";
  const at = positioner(source);
  if (source.length > MAX_ORDER_BY_LENGTH)
    throw filterError(`orderBy is longer than ${MAX_ORDER_BY_LENGTH} characters`, at(MAX_ORDER_BY_LENGTH));
  const tokens = tokenize(source, at);
  let i = 0;
  const peek = () => tokens[i];
  while (peek()) {
    const names: Name[] = [];
    for (;;) {
      const token = peek();
      if (token?.kind !== "name")
        throw expectedError(
          "a field name",
          token ? quote(token.text) : "end of orderBy",
          token?.position ?? at(source.length),
        );
      names.push({ name: token.text, position: token.position });
      i++;
      if (peek()?.kind !== "dot") break;
      i++;
    }
    const operand = resolveFieldPath(names, object, catalogue, "record");
    if (operand.field.type === "multipicklist") {
      throw filterError(
        `cannot order by the multipicklist ${operand.field.name}`,
        (names[names.length - 1] as Name).position,
      );
    }
    let direction: OrderDirection = "ASC";
    const next = peek();
    if (next?.kind === "name" && /^(asc|desc)$/i.test(next.text)) {
      direction = next.text.toUpperCase() as OrderDirection;
      i++;
    }
    terms.push({ operand, direction });
    if (terms.length > MAX_TERMS)
      throw filterError(`orderBy takes at most ${MAX_TERMS} terms`, (names[0] as Name).position);
    const separator = peek();
    if (!separator) break;
    if (separator.kind !== "comma")
      throw expectedError(
        "',' or the end of orderBy",
        quote(separator.text),
        separator.position,
        "an order term",
      );
    i++;
    if (!peek()) throw expectedError("a field name", "end of orderBy", at(source.length), "','");
  }
  const last = terms[terms.length - 1];
  if (!(last && last.operand.hops.length === 0 && last.operand.field.type === "id"))
    terms.push({ operand: uid, direction: "ASC" });
  return terms;
}

interface Token {
  kind: "name" | "dot" | "comma" | "other";
  text: string;
  position: ReturnType<ReturnType<typeof positioner>>;
}

function tokenize(source: string, at: ReturnType<typeof positioner>): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  for (;;) {
    const start = TOKEN.lastIndex;
    const match = TOKEN.exec(source);
    if (!match) break;
    const text = match[0].trimStart();
    const position = at(start + (match[0].length - text.length));
    const kind = match[1] ? "name" : match[2] ? "dot" : match[3] ? "comma" : "other";
    if (kind === "other") throw expectedError("a field name, '.', ',', ASC or DESC", quote(text), position);
    tokens.push({ kind, text, position });
  }
  return tokens;
}
