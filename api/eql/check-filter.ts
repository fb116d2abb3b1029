/**
 * Syntax tree × object of a catalogue → checked filter (checked-filter.ts):
 * paths resolved through references, operators checked against field types,
 * literals coerced to their stored representation, sub-queries held to their
 * limits. Pure.
 */
import type { Catalogue, ObjectDef } from "../model/catalogue.ts";
import { findObject } from "../model/catalogue.ts";
import type { FilterNode, IncludesNode, InNode, SubqueryNode } from "./ast.ts";
import { checkCompare, targetOf } from "./check-comparison.ts";
import type { CheckedCondition, CheckedFilter, FilterMode, Subject } from "./checked-filter.ts";
import { coerceLiteral } from "./coerce-literal.ts";
import { type ParseFilterOptions, parseFilter } from "./parse-filter.ts";
import { type PathScope, resolveFieldPath, resolvePath } from "./resolve-path.ts";
import { expectedError, filterError, quote } from "./source-text.ts";

/**
 * Most sub-queries in one filter. Each reads its object's whole table (no index serves a filter in
 * general), so the GraphQL cost check prices each as a list query (document-limits.ts); this bounds
 * what one filter argument adds to that price.
 */
export const MAX_SUBQUERIES = 8;
/**
 * Deepest nesting of sub-queries (one inside another's WHERE). Every level costs SQLite about 35 of
 * its 1000 levels of expression depth (30 levels broke it), which the filter's other 64 levels of
 * nesting share: 4 keep the whole well inside (test/store/sql/expression-depth.test.ts).
 */
export const MAX_SUBQUERY_DEPTH = 4;

/** How a filter is checked. */
export interface CheckFilterOptions {
  /** `extended`: paths start with `Current.`/`Previous.`, and `Operation` is a value. Default `filter`. */
  mode?: FilterMode;
}

function negate(condition: CheckedCondition, negated: boolean): CheckedCondition {
  return negated ? { kind: "not", operand: condition } : condition;
}

/** The sub-queries met so far while checking one filter, and how deep the one being checked is. */
interface SubqueryTally {
  count: number;
  depth: number;
}

function countSubquery(subquery: SubqueryNode, tally: SubqueryTally): void {
  if (++tally.count > MAX_SUBQUERIES) {
    throw filterError(
      `filter has more than ${MAX_SUBQUERIES} sub-queries`,
      subquery.position,
      `at most ${MAX_SUBQUERIES} sub-queries`,
      "another sub-query",
    );
  }
  if (tally.depth + 1 > MAX_SUBQUERY_DEPTH) {
    throw filterError(
      `sub-queries nest deeper than ${MAX_SUBQUERY_DEPTH} levels`,
      subquery.position,
      `at most ${MAX_SUBQUERY_DEPTH} levels of sub-queries`,
      "a deeper sub-query",
    );
  }
}

function checkSubquery(
  subject: Subject,
  node: InNode,
  subquery: SubqueryNode,
  scope: PathScope,
  tally: SubqueryTally,
): CheckedCondition {
  countSubquery(subquery, tally);
  const object = findObject(scope.catalogue, subquery.from.name);
  if (!object) {
    const names = scope.catalogue.objects.map((candidate) => candidate.name);
    throw expectedError(
      `an object (${names.join(", ")})`,
      quote(subquery.from.name),
      subquery.from.position,
      "'FROM'",
    );
  }
  const select = resolveFieldPath(subquery.select.segments, object, scope.catalogue, "record");
  const subjectTarget = targetOf(subject, node.path);
  const selectTarget = targetOf(select, subquery.select);
  if (selectTarget.valueClass !== subjectTarget.valueClass) {
    throw expectedError(
      `a field comparable with ${subjectTarget.label}`,
      selectTarget.label,
      subquery.select.position,
    );
  }
  const inner = { object, catalogue: scope.catalogue, mode: "filter" } as const;
  tally.depth++;
  const where = subquery.where === null ? null : checkCondition(subquery.where, inner, tally);
  tally.depth--;
  const valueClass = subjectTarget.valueClass;
  return negate({ kind: "inSelect", subject, valueClass, object, select, where }, node.negated);
}

function checkIn(node: InNode, scope: PathScope, tally: SubqueryTally): CheckedCondition {
  const subject = resolvePath(node.path, scope);
  const target = targetOf(subject, node.path);
  if (target.valueClass === "multipicklist") {
    throw expectedError(
      `INCLUDES or EXCLUDES for ${target.label}`,
      node.negated ? "'NOTIN'" : "'IN'",
      node.operatorPosition,
    );
  }
  if (!Array.isArray(node.source)) return checkSubquery(subject, node, node.source, scope, tally);
  const orNull = node.source.some((literal) => literal.kind === "null");
  const values = node.source
    .filter((literal) => literal.kind !== "null")
    .map((literal) => coerceLiteral(literal, target));
  const test: CheckedCondition =
    values.length === 0
      ? { kind: "isNull", subject }
      : { kind: "in", subject, valueClass: target.valueClass, values, orNull };
  return negate(test, node.negated);
}

function checkIncludes(node: IncludesNode, scope: PathScope): CheckedCondition {
  const subject = resolvePath(node.path, scope);
  const target = targetOf(subject, node.path);
  const word = node.negated ? "EXCLUDES" : "INCLUDES";
  if (subject.kind !== "field" || target.valueClass !== "multipicklist") {
    throw expectedError(`a multipicklist field before '${word}'`, target.label, node.position);
  }
  const values = node.values.map((literal) => {
    if (literal.kind === "null")
      throw filterError(`${word} needs values, not null`, literal.position, "a string", "null");
    return coerceLiteral(literal, target) as string;
  });
  return negate({ kind: "includes", subject, values }, node.negated);
}

function checkCondition(node: FilterNode, scope: PathScope, tally: SubqueryTally): CheckedCondition {
  switch (node.kind) {
    case "and":
    case "or": {
      const operands = node.operands.map((operand) => checkCondition(operand, scope, tally));
      return { kind: node.kind, operands };
    }
    case "not":
      return { kind: "not", operand: checkCondition(node.operand, scope, tally) };
    case "compare":
      return checkCompare(node, scope);
    case "in":
      return checkIn(node, scope, tally);
    case "includes":
      return checkIncludes(node, scope);
  }
}

/**
 * Types a parsed filter against `object` (references resolved in `catalogue`).
 * @throws UnknownFieldError for a name the object (or a referenced one) lacks, with valid names and a suggestion.
 * @throws FilterParseError for type errors (operator or literal unfit for the field), unknown sub-query objects,
 *   picklist values outside the picklist's items, and sub-queries past `MAX_SUBQUERIES` or `MAX_SUBQUERY_DEPTH`.
 */
function checkFilter(
  filter: FilterNode,
  object: ObjectDef,
  catalogue: Catalogue,
  options: CheckFilterOptions = {},
): CheckedFilter {
  const mode = options.mode ?? "filter";
  return {
    object,
    mode,
    condition: checkCondition(filter, { object, catalogue, mode }, { count: 0, depth: 0 }),
  };
}

/** `parseFilter` then `checkFilter`: filter text → checked filter, throwing the errors of either. */
export function prepareFilter(
  text: string,
  object: ObjectDef,
  catalogue: Catalogue,
  options: CheckFilterOptions & ParseFilterOptions = {},
): CheckedFilter {
  return checkFilter(parseFilter(text, options), object, catalogue, options);
}
