/**
 * The syntax tree of an EQL filter (SPEC.md §4) as `parseFilter` produces it:
 * untyped, every node carrying where it starts in the filter text. The checker
 * (check-filter.ts) turns it into a `CheckedFilter` against a catalogue.
 */
import type { SourcePosition } from "../../common/errors.ts";

/** An identifier with where it was written. */
export interface Name {
  name: string;
  position: SourcePosition;
}

/** `Region.Name`: one or more identifiers separated by dots. */
export interface PathNode {
  kind: "path";
  segments: Name[];
  position: SourcePosition;
}

interface LiteralBase {
  /** The literal as written. */
  source: string;
  position: SourcePosition;
}

/** `'text'` or `"text"`. */
export interface StringLiteral extends LiteralBase {
  kind: "string";
  /** With quotes removed and escapes resolved. */
  value: string;
}

/** `42`, `-12.50`. */
export interface NumberLiteral extends LiteralBase {
  kind: "number";
  value: number;
  /** The digits as written, sign included (`-12.50`): decimals keep their exactness. */
  text: string;
}

/** `true`, `FALSE`. */
export interface BooleanLiteral extends LiteralBase {
  kind: "boolean";
  value: boolean;
}

/** `null`: compared with `==`/`!=` it tests absence. */
export interface NullLiteral extends LiteralBase {
  kind: "null";
}

/** `2024-05-01T10:00:00.000Z`, any offset. */
export interface InstantLiteral extends LiteralBase {
  kind: "instant";
  /** ms since the epoch. */
  value: number;
}

/** `2024-05-01`. */
export interface DateLiteral extends LiteralBase {
  kind: "date";
  /** `YYYY-MM-DD`. */
  value: string;
}

/** `10:00`, `10:00:00`, `10:00:00.250`. */
export interface TimeLiteral extends LiteralBase {
  kind: "time";
  /** `HH:MM:SS.sss`. */
  value: string;
}

/** `90 minutes`, `duration(1 day)`. */
export interface DurationLiteral extends LiteralBase {
  kind: "duration";
  /** Length in ms. */
  value: number;
}

/** Any literal value of the grammar. */
export type Literal =
  | StringLiteral
  | NumberLiteral
  | BooleanLiteral
  | NullLiteral
  | InstantLiteral
  | DateLiteral
  | TimeLiteral
  | DurationLiteral;

/** `NOW()`, optionally `NOW() - 2 h`. */
export interface NowNode {
  kind: "now";
  /** Signed offset in ms added to the current instant. */
  offsetMs: number;
  position: SourcePosition;
}

/** One side of a comparison. */
export type Operand = PathNode | Literal | NowNode;

/** The `compOp` of the grammar. */
export type CompareOperator = "==" | "!=" | "<" | "<=" | ">" | ">=" | "LIKE" | "NOTLIKE";

/** `operand compOp operand`. */
export interface CompareNode {
  kind: "compare";
  operator: CompareOperator;
  operatorPosition: SourcePosition;
  left: Operand;
  right: Operand;
  position: SourcePosition;
}

/** `(SELECT Field FROM Object WHERE expr)`. */
export interface SubqueryNode {
  kind: "subquery";
  select: PathNode;
  from: Name;
  /** Null when the sub-query has no WHERE (an extension: every record of `from`). */
  where: FilterNode | null;
  position: SourcePosition;
}

/** `path IN [..]`, `path NOTIN (..)`, `path IN (SELECT ..)`. */
export interface InNode {
  kind: "in";
  negated: boolean;
  path: PathNode;
  operatorPosition: SourcePosition;
  source: Literal[] | SubqueryNode;
  position: SourcePosition;
}

/** `path INCLUDES literal`, `path EXCLUDES [..]`. */
export interface IncludesNode {
  kind: "includes";
  /** EXCLUDES. */
  negated: boolean;
  path: PathNode;
  operatorPosition: SourcePosition;
  values: Literal[];
  position: SourcePosition;
}

/** `a AND b AND c`, `a OR b`. */
export interface LogicalNode {
  kind: "and" | "or";
  /** Two or more. */
  operands: FilterNode[];
  position: SourcePosition;
}

/** `NOT expr` (an extension of the original language). */
export interface NotNode {
  kind: "not";
  operand: FilterNode;
  position: SourcePosition;
}

/** Any boolean expression of the filter language. */
export type FilterNode = LogicalNode | NotNode | CompareNode | InNode | IncludesNode;
