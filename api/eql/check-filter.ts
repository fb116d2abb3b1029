/**
 * Syntax tree × object of a catalogue → checked filter (checked-filter.ts):
 * paths resolved through references, operators checked against field types,
 * literals coerced to their stored representation. Pure.
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

/** How a filter is checked. */
export interface CheckFilterOptions {
  /** `extended`: paths start with `Current.`/`Previous.`, and `Operation` is a value. Default `filter`. */
  mode?: FilterMode;
}

function negate(condition: CheckedCondition, negated: boolean): CheckedCondition {
  return negated ? { kind: "not", operand: condition } : condition;
}

function checkSubquery(
  subject: Subject,
  node: InNode,
  subquery: SubqueryNode,
  scope: PathScope,
): CheckedCondition {
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
  const where = subquery.where === null ? null : checkCondition(subquery.where, inner);
  const valueClass = subjectTarget.valueClass;
  return negate({ kind: "inSelect", subject, valueClass, object, select, where }, node.negated);
}

function checkIn(node: InNode, scope: PathScope): CheckedCondition {
  const subject = resolvePath(node.path, scope);
  const target = targetOf(subject, node.path);
  if (target.valueClass === "multipicklist") {
    throw expectedError(
      `INCLUDES or EXCLUDES for ${target.label}`,
      node.negated ? "'NOTIN'" : "'IN'",
      node.operatorPosition,
    );
  }
  if (!Array.isArray(node.source)) return checkSubquery(subject, node, node.source, scope);
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

function checkCondition(node: FilterNode, scope: PathScope): CheckedCondition {
  switch (node.kind) {
    case "and":
    case "or":
      return { kind: node.kind, operands: node.operands.map((operand) => checkCondition(operand, scope)) };
    case "not":
      return { kind: "not", operand: checkCondition(node.operand, scope) };
    case "compare":
      return checkCompare(node, scope);
    case "in":
      return checkIn(node, scope);
    case "includes":
      return checkIncludes(node, scope);
  }
}

/**
 * Types a parsed filter against `object` (references resolved in `catalogue`).
 * @throws UnknownFieldError for a name the object (or a referenced one) lacks, with valid names and a suggestion.
 * @throws FilterParseError for type errors (operator or literal unfit for the field), unknown sub-query objects,
 *   and picklist values outside the picklist's items.
 */
function checkFilter(
  filter: FilterNode,
  object: ObjectDef,
  catalogue: Catalogue,
  options: CheckFilterOptions = {},
): CheckedFilter {
  const mode = options.mode ?? "filter";
  return { object, mode, condition: checkCondition(filter, { object, catalogue, mode }) };
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
