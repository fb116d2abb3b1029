/**
 * Checked filter → parameterised SQLite WHERE text, its bound values and the
 * LEFT JOINs its lookup paths need. Values are only ever bound (`?`), never
 * spliced; identifiers come from the catalogue, quoted with `quoteIdent`.
 * The SQL has exactly the semantics `evaluateFilter` implements
 * (checked-filter.ts): decimals (TEXT) compare as `CAST(.. AS REAL)`, LIKE is
 * SQLite's built-in one (ASCII case folding; `case_sensitive_like` must stay
 * off) with `\` as the escape, multipicklists are searched with `json_each`.
 */

import type {
  CheckedCondition,
  CheckedFilter,
  FieldOperand,
  ScalarValue,
  Subject,
  ValueClass,
} from "../../eql/checked-filter.ts";
import { resolveNow } from "../../eql/resolve-now.ts";
import type { ObjectDef } from "../../model/catalogue.ts";
import { type ColumnValue, quoteIdent } from "./record-codec.ts";

/** Where the filtered records live and what `NOW()` means. */
export interface SqlFilterOptions {
  /** The table holding `object`'s records. */
  tableOf(object: ObjectDef): string;
  /** Alias of the filtered object's table in the caller's FROM; the compiler's own aliases are `<alias>_<n>`. */
  alias: string;
  /** The instant `NOW()` means, ms since the epoch. */
  now: number;
}

/** A compiled filter: `SELECT ... FROM <table> AS <alias> <joins> WHERE <where>` with `params` bound. */
export interface SqlFilter {
  /** A boolean SQL expression for the caller's WHERE. */
  where: string;
  /** Values for the `?` placeholders of `joins` then `where`, in order (joins have none). */
  params: ColumnValue[];
  /** `LEFT JOIN ...` clauses to add after the caller's FROM, one per distinct lookup path. */
  joins: string[];
}

const SQL_OPERATORS = { "==": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">=" } as const;

/** Aliases and joins of one FROM (the caller's, or a sub-query's). */
class JoinScope {
  readonly joins: string[] = [];
  private readonly aliases = new Map<string, string>();

  constructor(
    readonly object: ObjectDef,
    readonly alias: string,
    private readonly state: CompileState,
  ) {}

  /** The alias of the table a path's hops reach, adding the LEFT JOINs not made yet. */
  aliasOf(operand: FieldOperand): string {
    let alias = this.alias;
    let key = "";
    for (const { reference, target } of operand.hops) {
      key += `.${reference.name}`;
      let joined = this.aliases.get(key);
      if (joined === undefined) {
        joined = this.state.newAlias();
        const uid = quoteIdent(uidColumn(target));
        const on = `${quoteIdent(joined)}.${uid} = ${quoteIdent(alias)}.${quoteIdent(reference.mapping)}`;
        this.joins.push(
          `LEFT JOIN ${quoteIdent(this.state.options.tableOf(target))} AS ${quoteIdent(joined)} ON ${on}`,
        );
        this.aliases.set(key, joined);
      }
      alias = joined;
    }
    return alias;
  }
}

class CompileState {
  readonly params: ColumnValue[] = [];
  private counter = 0;

  constructor(readonly options: SqlFilterOptions) {}

  newAlias(): string {
    return `${this.options.alias}_${++this.counter}`;
  }

  /**
   * A placeholder bound to `value` in `valueClass`'s SQL form (booleans 0/1, numbers as doubles).
   * Text goes through `CAST(? AS TEXT)`, which SQLite evaluates once per statement: compared
   * with a column as a bare `?`, a string bound by bun:sqlite costs ~50 ns more at every row
   * scanned (measured: 16 µs against 10.5 µs for a 100-row scan). The comparisons mean the
   * same: the other side is always a column (INTEGER or TEXT) or `CAST(column AS REAL)`, whose
   * affinity decides; against an expression without affinity, the cast would make it text.
   */
  bind(value: ScalarValue, valueClass: ValueClass): string {
    const bound =
      typeof value === "boolean" ? (value ? 1 : 0) : valueClass === "number" ? Number(value) : value;
    this.params.push(bound);
    return typeof bound === "string" ? "CAST(? AS TEXT)" : "?";
  }
}

function uidColumn(object: ObjectDef): string {
  return object.fields.find((field) => field.type === "id")?.mapping ?? "uid";
}

function column(subject: Subject, scope: JoinScope): string {
  if (subject.kind !== "field" || subject.root !== "record") {
    throw new Error(
      "extended filters (Current, Previous, Operation) are evaluated in memory, not compiled to SQL",
    );
  }
  const sql = `${quoteIdent(scope.aliasOf(subject))}.${quoteIdent(subject.field.mapping)}`;
  return subject.field.type === "decimal" ? `CAST(${sql} AS REAL)` : sql;
}

type Of<K extends CheckedCondition["kind"]> = Extract<CheckedCondition, { kind: K }>;

function compileCompare(condition: Of<"compare">, scope: JoinScope, state: CompileState): string {
  const { operator, right, valueClass } = condition;
  const left = column(condition.left, scope);
  if (right.kind === "value")
    return `${left} ${SQL_OPERATORS[operator]} ${state.bind(right.value, valueClass)}`;
  if (right.kind === "now")
    return `${left} ${SQL_OPERATORS[operator]} ${state.bind(resolveNow(right, state.options.now), valueClass)}`;
  // Field to field: == and != are null-safe.
  const sqlOperator = operator === "==" ? "IS" : operator === "!=" ? "IS NOT" : SQL_OPERATORS[operator];
  return `${left} ${sqlOperator} ${column(right, scope)}`;
}

function compileInSelect(condition: Of<"inSelect">, scope: JoinScope, state: CompileState): string {
  const subject = column(condition.subject, scope);
  const inner = new JoinScope(condition.object, state.newAlias(), state);
  const selected = column(condition.select, inner);
  // Compiled before the joins are read: the WHERE may add some.
  const where = condition.where === null ? "" : ` AND ${compileCondition(condition.where, inner, state)}`;
  const from = `${quoteIdent(state.options.tableOf(condition.object))} AS ${quoteIdent(inner.alias)}`;
  const joins = inner.joins.map((join) => ` ${join}`).join("");
  return `${subject} IN (SELECT ${selected} FROM ${from}${joins} WHERE ${selected} IS NOT NULL${where})`;
}

function compileIncludes(condition: Of<"includes">, scope: JoinScope, state: CompileState): string {
  const list = column(condition.subject, scope);
  const each = quoteIdent(state.newAlias());
  const values = condition.values.map((value) => state.bind(value, "text")).join(", ");
  const exists = `EXISTS (SELECT 1 FROM json_each(${list}) AS ${each} WHERE ${each}."value" IN (${values}))`;
  return `(CASE WHEN ${list} IS NULL THEN NULL ELSE ${exists} END)`;
}

function compileCondition(condition: CheckedCondition, scope: JoinScope, state: CompileState): string {
  switch (condition.kind) {
    case "and":
    case "or": {
      const parts = condition.operands.map((operand) => compileCondition(operand, scope, state));
      return `(${parts.join(condition.kind === "and" ? " AND " : " OR ")})`;
    }
    case "not":
      return `(NOT ${compileCondition(condition.operand, scope, state)})`;
    case "compare":
      return compileCompare(condition, scope, state);
    case "isNull":
      return `${column(condition.subject, scope)} IS NULL`;
    case "unknown":
      return "NULL";
    case "like":
      return `${column(condition.subject, scope)} LIKE ${state.bind(condition.pattern, "text")} ESCAPE '\\'`;
    case "in": {
      const subject = column(condition.subject, scope);
      const values = condition.values.map((value) => state.bind(value, condition.valueClass)).join(", ");
      const test = `${subject} IN (${values})`;
      return condition.orNull ? `(${test} OR ${subject} IS NULL)` : test;
    }
    case "inSelect":
      return compileInSelect(condition, scope, state);
    case "includes":
      return compileIncludes(condition, scope, state);
  }
}

/**
 * Compiles a checked (plain, not extended) filter for SQLite.
 * @throws Error for an extended filter: those are only evaluated in memory.
 */
export function compileFilter(filter: CheckedFilter, options: SqlFilterOptions): SqlFilter {
  if (filter.mode !== "filter")
    throw new Error("extended filters are evaluated in memory, not compiled to SQL");
  const state = new CompileState(options);
  const scope = new JoinScope(filter.object, options.alias, state);
  const where = compileCondition(filter.condition, scope, state);
  return { where, params: state.params, joins: scope.joins };
}
