/**
 * Checked condition × wanted truth → a query document matching the records for which the condition
 * has that truth, with EQL's three-valued logic (checked-filter.ts) kept exactly. A query document
 * only says yes or no, so each condition is compiled for the truth its context needs: `NOT c`
 * true is `c` false, `a AND b` false is `a` false or `b` false; a record for which `c` is unknown
 * is matched by neither `c` true nor `c` false, so NOT over unknown stays unknown. What MQL spells
 * differently:
 *
 * - absent values: `{p: null}` matches null and missing alike, comparison operators match neither
 *   (type brackets), and every "false" query says `$ne: null` or `$nin: [.., null]` itself;
 * - field-to-field comparisons run in `$expr`, where null and missing sort lowest instead of being
 *   unknown: each side is required non-null first (or, for `==`/`!=`, which are null-safe, both
 *   are read through `$ifNull` so missing equals null);
 * - numbers compare as doubles (a decimal through its shadow: ../record-codec.ts);
 * - LIKE is a regex (like-regex.ts); IN (SELECT ..) a `$lookup` probe per record for a matching
 *   sub-query record, and, where the false case needs it, one probe for any (an empty selection
 *   makes IN false even for an absent value).
 */
import type { Document } from "mongodb";
import { BadRequestError } from "../../../../common/errors.ts";
import type {
  CheckedCondition,
  ComparisonOperator,
  FieldOperand,
  Subject,
} from "../../../eql/checked-filter.ts";
import { resolveNow } from "../../../eql/resolve-now.ts";
import { LIKE_REGEX_OPTIONS, likeRegex } from "./like-regex.ts";
import { MqlScope } from "./mql-scope.ts";
import { queryValue } from "./mql-values.ts";
import { ALWAYS, allOf, anyOf, NEVER } from "./query-logic.ts";

type Of<K extends CheckedCondition["kind"]> = Extract<CheckedCondition, { kind: K }>;

const OPERATORS = { "==": "$eq", "!=": "$ne", "<": "$lt", "<=": "$lte", ">": "$gt", ">=": "$gte" } as const;
const NEGATED: Readonly<Record<ComparisonOperator, ComparisonOperator>> = {
  "==": "!=",
  "!=": "==",
  "<": ">=",
  "<=": ">",
  ">": "<=",
  ">=": "<",
};

/** What an extended filter given to the compiler meets: those are evaluated in memory only. */
export const extendedFilterError = () =>
  new BadRequestError(
    "extended filters (Current., Previous., Operation) are evaluated in memory against change events; the MongoDB store compiles plain filters only",
  );

/** The field a subject reads; extended filters' roots and `Operation` exist only in memory. */
function fieldOf(subject: Subject): FieldOperand {
  if (subject.kind !== "field" || subject.root !== "record") throw extendedFilterError();
  return subject;
}

const pathOf = (subject: Subject, scope: MqlScope) => scope.comparablePath(fieldOf(subject));
const present = (path: string): Document => ({ [path]: { $ne: null } });

function compileCompare(condition: Of<"compare">, want: boolean, scope: MqlScope): Document {
  const { right, valueClass } = condition;
  const operator = want ? condition.operator : NEGATED[condition.operator];
  const left = pathOf(condition.left, scope);
  if (right.kind === "value" || right.kind === "now") {
    const raw = right.kind === "value" ? right.value : resolveNow(right, scope.compilation.now);
    const value = queryValue(raw, valueClass);
    return operator === "!="
      ? { [left]: { $nin: [value, null] } }
      : { [left]: { [OPERATORS[operator]]: value } };
  }
  const other = pathOf(right, scope);
  if (operator === "==" || operator === "!=") {
    // Null-safe: two absent values are equal; missing and null both read as null.
    const sides = [{ $ifNull: [`$${left}`, null] }, { $ifNull: [`$${other}`, null] }];
    return { $expr: { [OPERATORS[operator]]: sides } };
  }
  return allOf([
    present(left),
    present(other),
    { $expr: { [OPERATORS[operator]]: [`$${left}`, `$${other}`] } },
  ]);
}

function compileLike(condition: Of<"like">, want: boolean, scope: MqlScope): Document {
  const path = pathOf(condition.subject, scope);
  const regex = { $regex: likeRegex(condition.pattern), $options: LIKE_REGEX_OPTIONS };
  return want ? { [path]: regex } : { [path]: { $ne: null, $not: regex } };
}

function compileIn(condition: Of<"in">, want: boolean, scope: MqlScope): Document {
  const path = pathOf(condition.subject, scope);
  const values = condition.values.map((value) => queryValue(value, condition.valueClass));
  // An absent value is unknown, unless the list holds null: then IN is true for it (and never false).
  if (want) return { [path]: { $in: condition.orNull ? [...values, null] : values } };
  return { [path]: { $nin: [...values, null] } };
}

function compileIncludes(condition: Of<"includes">, want: boolean, scope: MqlScope): Document {
  const path = pathOf(condition.subject, scope);
  // On an array `$in` is "holds one of"; `$nin` "holds none of", but also matches a missing field.
  return want
    ? { [path]: { $in: condition.values } }
    : { [path]: { $type: "array", $nin: condition.values } };
}

/** The sub-query of an IN (SELECT ..), compiled once for its probes. */
interface SubQuery {
  condition: Of<"inSelect">;
  /** Joins the selected value's path needs, then the rest of the WHERE's stages. */
  selectStages: Document[];
  whereStages: Document[];
  selected: string;
  /** The WHERE, and the selected value present. */
  where: Document;
}

function subQuery(condition: Of<"inSelect">, scope: MqlScope): SubQuery {
  const inner = new MqlScope(condition.object, scope.compilation);
  const selected = inner.comparablePath(condition.select);
  const selectStages = inner.stages.length;
  const where = condition.where === null ? ALWAYS : compile(condition.where, true, inner);
  return {
    condition,
    selectStages: inner.stages.slice(0, selectStages),
    whereStages: inner.stages.slice(selectStages),
    selected,
    where: allOf([present(selected), where]),
  };
}

/**
 * A `$lookup` leaving at `as` the first record of the sub-query whose selected value also meets
 * `probe` (matched before the WHERE's own joins, which then run on those records only), or nothing.
 */
function probeStage(
  sub: SubQuery,
  scope: MqlScope,
  as: string,
  probe: Document,
  variables?: Document,
): Document {
  const { object } = sub.condition;
  const pipeline = [
    { $match: scope.layout.scope(object) },
    ...sub.selectStages,
    ...(probe === ALWAYS ? [] : [{ $match: probe }]),
    ...sub.whereStages,
    { $match: sub.where },
    { $limit: 1 },
    { $project: { _id: 1 } },
  ];
  const lookup = {
    from: scope.layout.collection(object),
    ...(variables ? { let: variables } : {}),
    pipeline,
    as,
  };
  return { $lookup: lookup };
}

function compileInSelect(condition: Of<"inSelect">, want: boolean, scope: MqlScope): Document {
  const path = pathOf(condition.subject, scope);
  const sub = subQuery(condition, scope);
  const found = scope.compilation.temporary("s");
  const equal = allOf([present(sub.selected), { $expr: { $eq: [`$${sub.selected}`, "$$value"] } }]);
  scope.stages.push(probeStage(sub, scope, found, equal, { value: `$${path}` }));
  const isFound = { [`${found}.0`]: { $exists: true } };
  if (want) return allOf([present(path), isFound]);
  const any = scope.compilation.temporary("e");
  scope.stages.push(probeStage(sub, scope, any, ALWAYS));
  const notFound = { [`${found}.0`]: { $exists: false } };
  return anyOf([{ [`${any}.0`]: { $exists: false } }, allOf([present(path), notFound])]);
}

/**
 * The query matching the records of `scope` for which `condition` is `want` (true or false; never
 * the unknown ones), adding to the scope the stages it reads.
 * @throws BadRequestError for an extended filter's subjects; LimitExceededError for a LIKE pattern
 * too long for the server.
 */
export function compile(condition: CheckedCondition, want: boolean, scope: MqlScope): Document {
  switch (condition.kind) {
    case "and":
    case "or": {
      const operands = condition.operands.map((operand) => compile(operand, want, scope));
      return (condition.kind === "and") === want ? allOf(operands) : anyOf(operands);
    }
    case "not":
      return compile(condition.operand, !want, scope);
    case "compare":
      return compileCompare(condition, want, scope);
    case "isNull": {
      const path = pathOf(condition.subject, scope);
      return want ? { [path]: null } : present(path);
    }
    case "unknown":
      return NEVER;
    case "like":
      return compileLike(condition, want, scope);
    case "in":
      return compileIn(condition, want, scope);
    case "inSelect":
      return compileInSelect(condition, want, scope);
    case "includes":
      return compileIncludes(condition, want, scope);
  }
}
