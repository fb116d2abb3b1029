/** Syntax trees as compact S-expressions, so parser tests read as tables: `(and (== Name "x") (IN Kind ["a"]))`. */
import type { FilterNode, Literal, Operand, SubqueryNode } from "../../../api/eql/ast.ts";

function renderLiteral(literal: Literal): string {
  switch (literal.kind) {
    case "string":
      return JSON.stringify(literal.value);
    case "number":
      return `#${literal.text}`;
    case "boolean":
      return String(literal.value);
    case "null":
      return "null";
    case "instant":
      return `instant:${new Date(literal.value).toISOString()}`;
    case "date":
    case "time":
      return `${literal.kind}:${literal.value}`;
    case "duration":
      return `duration:${literal.value}ms`;
  }
}

function renderOperand(operand: Operand): string {
  if (operand.kind === "path") return operand.segments.map((segment) => segment.name).join(".");
  if (operand.kind === "now")
    return operand.offsetMs === 0 ? "NOW()" : `NOW()${operand.offsetMs > 0 ? "+" : ""}${operand.offsetMs}ms`;
  return renderLiteral(operand);
}

function renderSubquery(subquery: SubqueryNode): string {
  const where = subquery.where === null ? "" : ` WHERE ${renderAst(subquery.where)}`;
  return `(SELECT ${renderOperand(subquery.select)} FROM ${subquery.from.name}${where})`;
}

export function renderAst(node: FilterNode): string {
  switch (node.kind) {
    case "and":
    case "or":
      return `(${node.kind} ${node.operands.map(renderAst).join(" ")})`;
    case "not":
      return `(not ${renderAst(node.operand)})`;
    case "compare":
      return `(${node.operator} ${renderOperand(node.left)} ${renderOperand(node.right)})`;
    case "in": {
      const source = Array.isArray(node.source)
        ? `[${node.source.map(renderLiteral).join(" ")}]`
        : renderSubquery(node.source);
      return `(${node.negated ? "NOTIN" : "IN"} ${renderOperand(node.path)} ${source})`;
    }
    case "includes":
      return `(${node.negated ? "EXCLUDES" : "INCLUDES"} ${renderOperand(node.path)} [${node.values.map(renderLiteral).join(" ")}])`;
  }
}
