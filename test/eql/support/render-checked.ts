/** Checked filters as compact S-expressions: `(==:number Count 5)`, `(in:text Owner.Name ["a"])`. */
import type { CheckedCondition, Subject } from "../../../api/eql/checked-filter.ts";

function renderSubject(subject: Subject): string {
  if (subject.kind === "operation") return "Operation";
  const root = subject.root === "record" ? "" : `${subject.root}:`;
  return root + [...subject.hops.map((hop) => hop.reference.name), subject.field.name].join(".");
}

export function renderChecked(condition: CheckedCondition): string {
  switch (condition.kind) {
    case "and":
    case "or":
      return `(${condition.kind} ${condition.operands.map(renderChecked).join(" ")})`;
    case "not":
      return `(not ${renderChecked(condition.operand)})`;
    case "compare": {
      const { right } = condition;
      const value =
        right.kind === "value"
          ? JSON.stringify(right.value)
          : right.kind === "now"
            ? `NOW(${right.offsetMs}):${right.as}`
            : renderSubject(right);
      return `(${condition.operator}:${condition.valueClass} ${renderSubject(condition.left)} ${value})`;
    }
    case "isNull":
      return `(null? ${renderSubject(condition.subject)})`;
    case "unknown":
      return "unknown";
    case "like":
      return `(like ${renderSubject(condition.subject)} ${JSON.stringify(condition.pattern)})`;
    case "in": {
      const values = condition.values.map((value) => JSON.stringify(value)).join(" ");
      return `(in:${condition.valueClass} ${renderSubject(condition.subject)} [${values}]${condition.orNull ? "+null" : ""})`;
    }
    case "inSelect": {
      const where = condition.where === null ? "" : ` ${renderChecked(condition.where)}`;
      const select = `(select ${condition.object.name} ${renderSubject(condition.select)}${where})`;
      return `(in:${condition.valueClass} ${renderSubject(condition.subject)} ${select})`;
    }
    case "includes":
      return `(includes ${renderSubject(condition.subject)} ${JSON.stringify(condition.values)})`;
  }
}
