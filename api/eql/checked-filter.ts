/**
 * The checked filter: a filter's syntax tree typed against an object of the
 * catalogue, with paths resolved to fields and literals coerced to the stored
 * representation (record-codec.ts). Back-end neutral: the SQLite compiler, the
 * in-memory evaluator and any later engine consume this tree and nothing else.
 *
 * Semantics every consumer implements (SQL's three-valued logic):
 * - a comparison whose field value is absent is *unknown*; NOT unknown is
 *   unknown; AND/OR follow SQL; a record matches only when the whole filter
 *   is true;
 * - `isNull` is never unknown; `compare` between two fields with `==`/`!=` is
 *   null-safe (two absent values are equal; SQL `IS` / `IS NOT`);
 * - in the `number` class every value (a decimal's canonical string too) is
 *   compared as an IEEE double; `text`, `date` and `time` compare by Unicode
 *   code point (SQLite's BINARY collation);
 * - `in` with an empty `select` result is false, even for an absent value.
 */
import type { FieldDef, ObjectDef } from "../model/catalogue.ts";

/** How values of a field type compare: which literals fit and which operators apply. */
export type ValueClass = "text" | "number" | "boolean" | "datetime" | "date" | "time" | "multipicklist";

/** `filter`: paths start at the record; `extended`: at `Current.`/`Previous.`, plus `Operation`. */
export type FilterMode = "filter" | "extended";

/** A reference followed by a lookup path, and the object it leads to. */
export interface Hop {
  reference: FieldDef;
  target: ObjectDef;
}

/** A field value reached from the root record through zero or more references. */
export interface FieldOperand {
  kind: "field";
  /** The filtered record, or (extended filters) the change's current or previous values. */
  root: "record" | "current" | "previous";
  hops: Hop[];
  /** The field read at the end of the path; a reference field reads as the target's UID. */
  field: FieldDef;
  valueClass: ValueClass;
}

/** `Operation` of an extended filter: `INSERT`, `UPDATE` or `DELETE`. */
export interface OperationOperand {
  kind: "operation";
  valueClass: "text";
}

/** What a condition tests: a field of a record, or the change's operation. */
export type Subject = FieldOperand | OperationOperand;

/** A literal in its stored representation: ms for datetime, canonical text for decimals, dates and times. */
export type ScalarValue = string | number | boolean;

/** A literal, coerced. */
export interface ValueOperand {
  kind: "value";
  value: ScalarValue;
}

/** `NOW()` plus `offsetMs`, resolved by the consumer from its `now` into the subject's class. */
export interface NowOperand {
  kind: "now";
  offsetMs: number;
  as: "datetime" | "date" | "time";
}

/** Comparison operators left after checking (LIKE has its own node). */
export type ComparisonOperator = "==" | "!=" | "<" | "<=" | ">" | ">=";

/** A typed boolean expression; see the file comment for the semantics every consumer implements. */
export type CheckedCondition =
  | { kind: "and" | "or"; operands: CheckedCondition[] }
  | { kind: "not"; operand: CheckedCondition }
  | {
      kind: "compare";
      operator: ComparisonOperator;
      valueClass: ValueClass;
      left: Subject;
      right: Subject | ValueOperand | NowOperand;
    }
  /** True when the subject's value is absent. */
  | { kind: "isNull"; subject: Subject }
  /** A comparison with a `null` literal other than `==`/`!=`: always unknown. */
  | { kind: "unknown" }
  /** `pattern` in canonical form: `%`, `_`, and `\` escaping exactly `%`, `_` and `\` (like-pattern.ts). */
  | { kind: "like"; subject: Subject; pattern: string }
  /** `values` is never empty; `orNull` adds "or the value is absent" (a `null` in the list). */
  | { kind: "in"; subject: Subject; valueClass: ValueClass; values: ScalarValue[]; orNull: boolean }
  /** Subject among the non-null `select` values of `object`'s records matching `where` (null: all). */
  | {
      kind: "inSelect";
      subject: Subject;
      valueClass: ValueClass;
      object: ObjectDef;
      select: FieldOperand;
      where: CheckedCondition | null;
    }
  /** The multipicklist holds at least one of `values` (unknown when absent). */
  | { kind: "includes"; subject: FieldOperand; values: string[] };

/** The output of `checkFilter`, input of every back end. */
export interface CheckedFilter {
  /** The object whose records the filter selects. */
  object: ObjectDef;
  mode: FilterMode;
  condition: CheckedCondition;
}
