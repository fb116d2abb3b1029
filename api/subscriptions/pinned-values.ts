/**
 * A checked filter → the fields it pins: `field == value` or `field IN [values]` terms that every
 * record (or change) the filter matches must satisfy, so a matcher can look subscriptions up by
 * the value a change carries instead of testing each one (subscription-index.ts). Pure.
 *
 * Only terms of the top-level conjunction count: a filter is true only when each of its AND
 * operands is true, and under the three-valued logic (checked-filter.ts) `f == v` is true only
 * when `f` is present and equal to `v`, `f IN [...]` (without `null`) only when `f` is present
 * and among the values. Anything under OR or NOT, `!=`, LIKE, comparisons with `null` or with
 * another field or `NOW()`, and lookup paths (`Owner.Name`: the value is not on the changed
 * record) pin nothing. Missing a pin is always safe (the subscription is scanned); a wrong pin
 * would lose events, so this stays conservative.
 */
import type {
  CheckedCondition,
  CheckedFilter,
  FieldOperand,
  ScalarValue,
  ValueClass,
} from "../eql/checked-filter.ts";
import { comparable } from "../eql/compare-values.ts";

/** Which values a pin reads: the filtered record, or (extended filters) the change's current or previous values. */
export type PinnedRoot = FieldOperand["root"];

/** One pinned field: a match needs the field's value (read in `valueClass`) to be one of `values`. */
export interface PinnedField {
  root: PinnedRoot;
  /** The field's name on the record (a reference field holds the target's UID). */
  field: string;
  valueClass: ValueClass;
  /** Distinct, as `comparable` makes them (numbers as doubles): never empty. */
  values: ScalarValue[];
}

/** Value classes whose equality is plain value equality (multipicklists take no `==`/`IN`). */
const SCALAR_CLASSES: ReadonlySet<ValueClass> = new Set([
  "text",
  "number",
  "boolean",
  "datetime",
  "date",
  "time",
]);

/** The operands of the top-level conjunction (nested ANDs flattened: still a conjunction). */
function conjuncts(condition: CheckedCondition): CheckedCondition[] {
  return condition.kind === "and" ? condition.operands.flatMap(conjuncts) : [condition];
}

function pinOf(condition: CheckedCondition): PinnedField | null {
  let subject: FieldOperand | null = null;
  let literals: ScalarValue[] = [];
  if (condition.kind === "compare" && condition.operator === "==" && condition.right.kind === "value") {
    if (condition.left.kind !== "field") return null;
    subject = condition.left;
    literals = [condition.right.value];
  } else if (condition.kind === "in" && !condition.orNull) {
    if (condition.subject.kind !== "field") return null;
    subject = condition.subject;
    literals = condition.values;
  }
  if (!subject || subject.hops.length > 0 || !SCALAR_CLASSES.has(subject.valueClass)) return null;
  const { valueClass } = subject;
  const values = [...new Set(literals.map((value) => comparable(value, valueClass)))];
  if (values.length === 0 || values.some((value) => value === null)) return null;
  return { root: subject.root, field: subject.field.name, valueClass, values: values as ScalarValue[] };
}

/**
 * The fields `filter` pins, one entry per pinning term of its top-level conjunction, in the
 * filter's order; empty when none does.
 */
export function pinnedValues(filter: CheckedFilter): PinnedField[] {
  return conjuncts(filter.condition).flatMap((term) => {
    const pin = pinOf(term);
    return pin ? [pin] : [];
  });
}
