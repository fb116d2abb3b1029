/** Type checking of `operand compOp operand` comparisons (check-filter.ts does the rest). */
import type { CompareNode, Operand, PathNode } from "./ast.ts";
import type { CheckedCondition, ComparisonOperator, Subject } from "./checked-filter.ts";
import { type CoercionTarget, coerceLiteral, describeLiteral } from "./coerce-literal.ts";
import { canonicalLikePattern } from "./like-pattern.ts";
import { describeSubject, type PathScope, resolvePath } from "./resolve-path.ts";
import { expectedError, filterError, quote } from "./source-text.ts";

/** The values `Operation` takes in extended filters. */
const OPERATIONS: readonly string[] = ["INSERT", "UPDATE", "DELETE"];

const FLIPPED: Readonly<Record<ComparisonOperator, ComparisonOperator>> = {
  "==": "==",
  "!=": "!=",
  "<": ">",
  "<=": ">=",
  ">": "<",
  ">=": "<=",
};

/** What literals compared with `subject` (written as `path`) must be. */
export function targetOf(subject: Subject, path: PathNode): CoercionTarget {
  if (subject.kind === "operation")
    return { valueClass: "text", type: "operation", items: OPERATIONS, label: "Operation" };
  const { field } = subject;
  const items = field.type === "picklist" || field.type === "multipicklist" ? field.items : null;
  return { valueClass: subject.valueClass, type: field.type, items, label: describeSubject(path, subject) };
}

function describeOperand(operand: Operand): string {
  return operand.kind === "now" ? "NOW()" : operand.kind === "path" ? "a field" : describeLiteral(operand);
}

/** Throws unless `operator` applies to values of `target` (multipicklists take none; booleans no ordering). */
function assertOperator(
  operator: string,
  target: CoercionTarget,
  position: CompareNode["operatorPosition"],
): void {
  if (target.valueClass === "multipicklist") {
    throw expectedError(
      `INCLUDES, EXCLUDES, == null or != null for ${target.label}`,
      quote(operator),
      position,
    );
  }
  if (target.valueClass === "boolean" && operator !== "==" && operator !== "!=") {
    throw expectedError(`== or != for ${target.label}`, quote(operator), position);
  }
}

/**
 * Longest LIKE pattern, in characters. Webhook and live-subscription filters match patterns in the
 * API's event loop, each segment in one pass of the value (like-pattern.ts), but a segment with `_`
 * costs the value's length × the segment's / 32: at 1,000 characters about 3 ms against the longest
 * textarea (131,072 characters), where the filter text's own bound (10,000) allowed 32 ms.
 */
export const MAX_LIKE_PATTERN = 1000;

function checkLike(node: CompareNode, scope: PathScope): CheckedCondition {
  const { left, right } = node;
  if (left.kind !== "path")
    throw filterError(
      `${node.operator} needs a field on its left`,
      left.position,
      "a field",
      describeOperand(left),
    );
  const subject = resolvePath(left, scope);
  const target = targetOf(subject, left);
  if (target.valueClass !== "text") {
    throw expectedError(`a text field before '${node.operator}'`, target.label, node.position);
  }
  let like: CheckedCondition;
  if (right.kind === "null") like = { kind: "unknown" };
  else if (right.kind === "string") {
    const length = [...right.value].length;
    if (length > MAX_LIKE_PATTERN)
      throw filterError(
        `a LIKE pattern may have at most ${MAX_LIKE_PATTERN} characters; this one has ${length}`,
        right.position,
      );
    like = { kind: "like", subject, pattern: canonicalLikePattern(right.value) };
  } else
    throw expectedError(`a string pattern after '${node.operator}'`, describeOperand(right), right.position);
  return node.operator === "NOTLIKE" ? { kind: "not", operand: like } : like;
}

function nullComparison(
  operator: ComparisonOperator,
  subject: Subject,
  target: CoercionTarget,
  node: CompareNode,
): CheckedCondition {
  if (operator === "==") return { kind: "isNull", subject };
  if (operator === "!=") return { kind: "not", operand: { kind: "isNull", subject } };
  assertOperator(operator, target, node.operatorPosition);
  return { kind: "unknown" };
}

function comparePaths(
  operator: ComparisonOperator,
  left: Subject,
  leftTarget: CoercionTarget,
  right: PathNode,
  node: CompareNode,
  scope: PathScope,
): CheckedCondition {
  const subject = resolvePath(right, scope);
  const target = targetOf(subject, right);
  if (target.valueClass !== leftTarget.valueClass) {
    throw expectedError(`a field comparable with ${leftTarget.label}`, target.label, right.position);
  }
  assertOperator(operator, leftTarget, node.operatorPosition);
  return { kind: "compare", operator, valueClass: leftTarget.valueClass, left, right: subject };
}

/**
 * Types one comparison. A literal or `NOW()` on the left is moved right (the
 * operator mirrored); `== null` / `!= null` become absence tests.
 * @throws FilterParseError for operators or literals that do not fit the field; UnknownFieldError via paths.
 */
export function checkCompare(node: CompareNode, scope: PathScope): CheckedCondition {
  if (node.operator === "LIKE" || node.operator === "NOTLIKE") return checkLike(node, scope);
  let { left, right } = node;
  let operator: ComparisonOperator = node.operator;
  if (left.kind !== "path" && right.kind === "path") {
    [left, right] = [right, left];
    operator = FLIPPED[operator];
  }
  if (left.kind !== "path") {
    throw filterError(
      "a comparison needs a field on at least one side",
      node.position,
      "a field",
      describeOperand(left),
    );
  }
  const subject = resolvePath(left, scope);
  const target = targetOf(subject, left);
  if (right.kind === "path") return comparePaths(operator, subject, target, right, node, scope);
  if (right.kind === "null") return nullComparison(operator, subject, target, node);
  assertOperator(operator, target, node.operatorPosition);
  if (right.kind === "now") {
    const as = target.valueClass;
    if (as !== "datetime" && as !== "date" && as !== "time") {
      throw expectedError(`a value for ${target.label}`, "NOW()", right.position);
    }
    return {
      kind: "compare",
      operator,
      valueClass: as,
      left: subject,
      right: { kind: "now", offsetMs: right.offsetMs, as },
    };
  }
  const value = coerceLiteral(right, target, operator === "==" || operator === "!=");
  return {
    kind: "compare",
    operator,
    valueClass: target.valueClass,
    left: subject,
    right: { kind: "value", value },
  };
}
