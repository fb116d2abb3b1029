/**
 * What evaluating a checked filter in memory needs besides the record: the
 * lookup paths it follows (so a caller can fetch those records first) and
 * whether it has sub-queries (which need whole objects).
 */
import type { CheckedCondition, CheckedFilter, FieldOperand, Hop } from "./checked-filter.ts";

export interface FilterNeeds {
  /** Distinct reference chains followed from the root record(s), with the root they start from. */
  paths: { root: FieldOperand["root"]; hops: Hop[] }[];
  hasSubquery: boolean;
  /** The filter reads NOW(): its compiled form depends on the moment it runs. */
  usesNow: boolean;
}

export function filterNeeds(filter: CheckedFilter): FilterNeeds {
  const paths = new Map<string, { root: FieldOperand["root"]; hops: Hop[] }>();
  let hasSubquery = false;
  let usesNow = false;
  const subject = (operand: unknown) => {
    const field = operand as FieldOperand;
    if (field?.kind !== "field" || field.hops.length === 0) return;
    paths.set(`${field.root}:${field.hops.map((h) => h.reference.id).join(".")}`, {
      root: field.root,
      hops: field.hops,
    });
  };
  const walk = (condition: CheckedCondition): void => {
    switch (condition.kind) {
      case "and":
      case "or":
        condition.operands.forEach(walk);
        return;
      case "not":
        walk(condition.operand);
        return;
      case "compare":
        subject(condition.left);
        subject(condition.right);
        if (condition.right.kind === "now") usesNow = true;
        return;
      case "inSelect":
        hasSubquery = true;
        subject(condition.subject);
        if (condition.where) walk(condition.where);
        return;
      case "isNull":
      case "like":
      case "in":
      case "includes":
        subject(condition.subject);
        return;
      case "unknown":
        return;
    }
  };
  walk(filter.condition);
  return { paths: [...paths.values()], hasSubquery, usesNow };
}
