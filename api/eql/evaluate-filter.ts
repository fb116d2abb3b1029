/**
 * Checked filter × record → does the record match, in memory, with exactly
 * the semantics of the SQL the SQLite compiler produces (checked-filter.ts):
 * SQL three-valued logic, null-safe field-to-field equality, code point text
 * order, ASCII-case-insensitive LIKE. Pure and synchronous: lookups and
 * sub-queries read through the context.
 */
import type { RecordValues } from "../model/record-values.ts";
import type {
  CheckedCondition,
  CheckedFilter,
  ComparisonOperator,
  Subject,
  ValueClass,
} from "./checked-filter.ts";
import { comparable, compareValues } from "./compare-values.ts";
import { matchesLike } from "./like-pattern.ts";
import { resolveNow } from "./resolve-now.ts";

/** What evaluation reads besides the record itself. */
export interface EvaluationContext {
  /** The instant `NOW()` means, ms since the epoch. */
  now: number;
  /** The record of `objectName` with `uid`, or null (a dangling reference reads as absent). */
  lookup(objectName: string, uid: string): RecordValues | null;
  /** Every record of `objectName` (sub-queries filter them). */
  select(objectName: string): readonly RecordValues[];
}

/** The kinds of change an extended filter sees as `Operation`. */
export type ChangeOperation = "INSERT" | "UPDATE" | "DELETE";

/** What an extended filter tests: the record's values after and before a change. */
export interface ChangeValues {
  current: RecordValues | null;
  previous: RecordValues | null;
  operation: ChangeOperation;
}

/** SQL truth: true, false or unknown (null). */
type Truth = boolean | null;

/** One evaluation: the caller's context plus the sub-query results computed so far (they do not depend on the record). */
interface Evaluation extends EvaluationContext {
  selections: Map<CheckedCondition, Set<unknown>>;
}

/** An evaluation over `context` (bound explicitly: the context may be a class instance). */
function begin(context: EvaluationContext): Evaluation {
  return {
    now: context.now,
    lookup: (objectName, uid) => context.lookup(objectName, uid),
    select: (objectName) => context.select(objectName),
    selections: new Map(),
  };
}

interface Roots {
  record: RecordValues | null;
  current: RecordValues | null;
  previous: RecordValues | null;
  operation: ChangeOperation | null;
}

function read(subject: Subject, roots: Roots, context: Evaluation): unknown {
  if (subject.kind === "operation") return roots.operation;
  let record = roots[subject.root];
  for (const hop of subject.hops) {
    const uid = record?.[hop.reference.name];
    record = typeof uid === "string" ? context.lookup(hop.target.name, uid) : null;
  }
  return record?.[subject.field.name] ?? null;
}

function holds(operator: ComparisonOperator, order: number): boolean {
  switch (operator) {
    case "==":
      return order === 0;
    case "!=":
      return order !== 0;
    case "<":
      return order < 0;
    case "<=":
      return order <= 0;
    case ">":
      return order > 0;
    case ">=":
      return order >= 0;
  }
}

type Compare = Extract<CheckedCondition, { kind: "compare" }>;

function evaluateCompare(condition: Compare, roots: Roots, context: Evaluation): Truth {
  const { operator, valueClass, right } = condition;
  const left = comparable(read(condition.left, roots, context), valueClass);
  let value: unknown;
  if (right.kind === "value") value = right.value;
  else if (right.kind === "now") value = resolveNow(right, context.now);
  else value = read(right, roots, context);
  const other = comparable(value, valueClass);
  const nullSafe = right.kind !== "value" && right.kind !== "now" && (operator === "==" || operator === "!=");
  if (left === null || other === null) {
    return nullSafe ? (operator === "==") === (left === other) : null;
  }
  return holds(operator, compareValues(left, other));
}

function selectValues(
  condition: Extract<CheckedCondition, { kind: "inSelect" }>,
  context: Evaluation,
): Set<unknown> {
  const cached = context.selections.get(condition);
  if (cached) return cached;
  const values = new Set<unknown>();
  context.selections.set(condition, values);
  for (const record of context.select(condition.object.name)) {
    const roots: Roots = { record, current: null, previous: null, operation: null };
    if (condition.where !== null && evaluate(condition.where, roots, context) !== true) continue;
    const value = comparable(read(condition.select, roots, context), condition.valueClass);
    if (value !== null) values.add(value);
  }
  return values;
}

function evaluateIn(
  subject: Subject,
  valueClass: ValueClass,
  values: Set<unknown>,
  roots: Roots,
  context: Evaluation,
): Truth {
  if (values.size === 0) return false;
  const value = comparable(read(subject, roots, context), valueClass);
  return value === null ? null : values.has(value);
}

function evaluateLogic(
  kind: "and" | "or",
  operands: CheckedCondition[],
  roots: Roots,
  context: Evaluation,
): Truth {
  const decisive = kind === "or";
  let unknown = false;
  for (const operand of operands) {
    const truth = evaluate(operand, roots, context);
    if (truth === decisive) return decisive;
    if (truth === null) unknown = true;
  }
  return unknown ? null : !decisive;
}

function evaluate(condition: CheckedCondition, roots: Roots, context: Evaluation): Truth {
  switch (condition.kind) {
    case "and":
    case "or":
      return evaluateLogic(condition.kind, condition.operands, roots, context);
    case "not": {
      const truth = evaluate(condition.operand, roots, context);
      return truth === null ? null : !truth;
    }
    case "compare":
      return evaluateCompare(condition, roots, context);
    case "isNull":
      return read(condition.subject, roots, context) === null;
    case "unknown":
      return null;
    case "like": {
      const value = read(condition.subject, roots, context);
      return value === null ? null : matchesLike(String(value), condition.pattern);
    }
    case "in": {
      const values = new Set(condition.values.map((value) => comparable(value, condition.valueClass)));
      const truth = evaluateIn(condition.subject, condition.valueClass, values, roots, context);
      return truth === null && condition.orNull ? true : truth;
    }
    case "inSelect":
      return evaluateIn(
        condition.subject,
        condition.valueClass,
        selectValues(condition, context),
        roots,
        context,
      );
    case "includes": {
      const value = read(condition.subject, roots, context);
      return Array.isArray(value) ? condition.values.some((item) => value.includes(item)) : null;
    }
  }
}

/**
 * True when `record` (an object's values, keyed by field name) matches `filter`.
 * @throws Error when `filter` was checked as an extended filter.
 */
export function evaluateFilter(
  filter: CheckedFilter,
  record: RecordValues,
  context: EvaluationContext,
): boolean {
  if (filter.mode !== "filter") throw new Error("an extended filter needs evaluateExtendedFilter");
  const roots: Roots = { record, current: null, previous: null, operation: null };
  return evaluate(filter.condition, roots, begin(context)) === true;
}

/**
 * True when a change (current and previous values, operation) matches an extended filter.
 * @throws Error when `filter` was checked as a plain filter.
 */
export function evaluateExtendedFilter(
  filter: CheckedFilter,
  change: ChangeValues,
  context: EvaluationContext,
): boolean {
  if (filter.mode !== "extended") throw new Error("a plain filter needs evaluateFilter");
  const roots: Roots = { record: null, ...change };
  return evaluate(filter.condition, roots, begin(context)) === true;
}
