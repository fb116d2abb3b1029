/**
 * Checked filter → parameterised WHERE text in a SQL dialect, its bound values
 * and the LEFT JOINs its lookup paths need. Values are only ever bound (`?`),
 * never spliced; identifiers come from the catalogue, quoted with `quoteIdent`.
 * The SQL has exactly the semantics `evaluateFilter` implements
 * (checked-filter.ts); where engines spell them differently (a decimal as a
 * double, null-safe equality, LIKE folding ASCII case only, a multipicklist's
 * membership), the dialect (sql-dialect.ts) writes the piece.
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
import { quoteIdent } from "./quote-ident.ts";
import type { SqlDialect } from "./sql-dialect.ts";

/** Where the filtered records live and what `NOW()` means. */
export interface SqlFilterOptions {
  /**
   * The table holding `object`'s records, as SQL: quoted, and schema-qualified where the engine keeps
   * tables in schemas (`"t1"."things"`), placed as given.
   */
  tableRef(object: ObjectDef): string;
  /** Alias of the filtered object's table in the caller's FROM; the compiler's own aliases are `<alias>_<n>`. */
  alias: string;
  /** The instant `NOW()` means, ms since the epoch. */
  now: number;
}

/** A compiled filter: `SELECT ... FROM <table> AS <alias> <joins> WHERE <where>` with `params` bound. */
export interface SqlFilter<V> {
  /** A boolean SQL expression for the caller's WHERE. */
  where: string;
  /** Values for the `?` placeholders of `joins` then `where`, in order (joins have none). */
  params: V[];
  /** `LEFT JOIN ...` clauses to add after the caller's FROM, one per distinct lookup path. */
  joins: string[];
}

/**
 * A piece of the WHERE text and how deep an engine's parse of it nests (`a = ?` is 1). SQLite refuses
 * a statement nested past 1000 levels and counts what is inside a sub-query once more per sub-query
 * around it, so the compiler keeps the depth down where it can (`joinChain`).
 */
interface SqlPiece {
  sql: string;
  height: number;
}

/** Chains of up to this many comparisons are written flat, as the filter wrote them. */
const FLAT_CHAIN = 4;

/** EQL's comparison operators in SQL (null-safe ones come from the dialect). */
const SQL_OPERATORS = { "==": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">=" } as const;

/** Aliases and joins of one FROM (the caller's, or a sub-query's). */
class JoinScope<V> {
  readonly joins: string[] = [];
  private readonly aliases = new Map<string, string>();

  constructor(
    readonly object: ObjectDef,
    readonly alias: string,
    private readonly state: CompileState<V>,
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
        this.joins.push(`LEFT JOIN ${this.state.options.tableRef(target)} AS ${quoteIdent(joined)} ON ${on}`);
        this.aliases.set(key, joined);
      }
      alias = joined;
    }
    return alias;
  }
}

class CompileState<V> {
  readonly params: V[] = [];
  private counter = 0;

  constructor(
    readonly dialect: SqlDialect<V>,
    readonly options: SqlFilterOptions,
  ) {}

  newAlias(): string {
    return `${this.options.alias}_${++this.counter}`;
  }

  /** A placeholder bound to `value` in `valueClass`'s SQL form; the other side is always a column. */
  bind(value: ScalarValue, valueClass: ValueClass): string {
    const bound = this.dialect.bindValue(value, valueClass);
    this.params.push(bound);
    return this.dialect.placeholder(bound);
  }
}

function uidColumn(object: ObjectDef): string {
  return object.fields.find((field) => field.type === "id")?.mapping ?? "uid";
}

function column<V>(subject: Subject, scope: JoinScope<V>, state: CompileState<V>): string {
  if (subject.kind !== "field" || subject.root !== "record") {
    throw new Error(
      "extended filters (Current, Previous, Operation) are evaluated in memory, not compiled to SQL",
    );
  }
  const sql = `${quoteIdent(scope.aliasOf(subject))}.${quoteIdent(subject.field.mapping)}`;
  return state.dialect.comparable(sql, subject.field);
}

type Of<K extends CheckedCondition["kind"]> = Extract<CheckedCondition, { kind: K }>;

function compileCompare<V>(condition: Of<"compare">, scope: JoinScope<V>, state: CompileState<V>): string {
  const { operator, right, valueClass } = condition;
  const left = column(condition.left, scope, state);
  if (right.kind === "value")
    return `${left} ${SQL_OPERATORS[operator]} ${state.bind(right.value, valueClass)}`;
  if (right.kind === "now")
    return `${left} ${SQL_OPERATORS[operator]} ${state.bind(resolveNow(right, state.options.now), valueClass)}`;
  // Field to field: == and != are null-safe.
  const { nullSafe } = state.dialect;
  const sqlOperator =
    operator === "==" ? nullSafe.equal : operator === "!=" ? nullSafe.notEqual : SQL_OPERATORS[operator];
  return `${left} ${sqlOperator} ${column(right, scope, state)}`;
}

function compileInSelect<V>(
  condition: Of<"inSelect">,
  scope: JoinScope<V>,
  state: CompileState<V>,
): SqlPiece {
  const subject = column(condition.subject, scope, state);
  const inner = new JoinScope(condition.object, state.newAlias(), state);
  const selected = column(condition.select, inner, state);
  // Compiled before the joins are read: the WHERE may add some.
  const where = condition.where === null ? null : compileCondition(condition.where, inner, state);
  const from = `${state.options.tableRef(condition.object)} AS ${quoteIdent(inner.alias)}`;
  const joins = inner.joins.map((join) => ` ${join}`).join("");
  const test = `${selected} IS NOT NULL${where === null ? "" : ` AND ${where.sql}`}`;
  return {
    sql: `${subject} IN (SELECT ${selected} FROM ${from}${joins} WHERE ${test})`,
    height: 2 + (where?.height ?? 1),
  };
}

function compileIncludes<V>(condition: Of<"includes">, scope: JoinScope<V>, state: CompileState<V>): string {
  const list = column(condition.subject, scope, state);
  const alias = quoteIdent(state.newAlias());
  const values = condition.values.map((value) => state.bind(value, "text"));
  return state.dialect.includesAny(list, values, alias);
}

const leaf = (sql: string): SqlPiece => ({ sql, height: 1 });

/** The depth of `(p0 OP p1 OP ... OP pn)` parsed as engines do, left to right: `((p0 OP p1) OP ...) OP pn`. */
function flatHeight(pieces: SqlPiece[]): number {
  return Math.max(...pieces.map((piece, i) => piece.height + pieces.length - Math.max(i, 1)));
}

/** Where to halve `pieces` so that each half weighs about the same, a piece weighing 2^height. */
function splitByWeight(pieces: SqlPiece[]): number {
  const weights = pieces.map((piece) => 2 ** piece.height);
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  let best = 1;
  let bestGap = Number.POSITIVE_INFINITY;
  let prefix = 0;
  for (let i = 1; i < pieces.length; i++) {
    prefix += weights[i - 1] as number;
    const gap = Math.abs(total - 2 * prefix);
    if (gap < bestGap) [best, bestGap] = [i, gap];
  }
  return best;
}

/**
 * `(a AND b AND c)` as written while that nests no deeper than halving it would; else two halves of
 * about equal weight, each in parentheses (the same condition: AND and OR are associative in
 * three-valued logic too), so that a chain of 1000 comparisons nests 10 levels, not 1000, and a
 * nested group in it one level more than its own. Chains of up to `FLAT_CHAIN` comparisons stay flat.
 */
function joinChain(pieces: SqlPiece[], operator: " AND " | " OR "): SqlPiece {
  if (pieces.length === 1) return pieces[0] as SqlPiece;
  const flat = flatHeight(pieces);
  if (pieces.length > FLAT_CHAIN || pieces.some((piece) => piece.height > 1)) {
    const at = splitByWeight(pieces);
    const left = joinChain(pieces.slice(0, at), operator);
    const right = joinChain(pieces.slice(at), operator);
    const height = 1 + Math.max(left.height, right.height);
    if (height < flat) return { sql: `(${left.sql}${operator}${right.sql})`, height };
  }
  return { sql: `(${pieces.map((piece) => piece.sql).join(operator)})`, height: flat };
}

function compileCondition<V>(
  condition: CheckedCondition,
  scope: JoinScope<V>,
  state: CompileState<V>,
): SqlPiece {
  switch (condition.kind) {
    case "and":
    case "or": {
      const parts = condition.operands.map((operand) => compileCondition(operand, scope, state));
      return joinChain(parts, condition.kind === "and" ? " AND " : " OR ");
    }
    case "not": {
      const operand = compileCondition(condition.operand, scope, state);
      return { sql: `(NOT ${operand.sql})`, height: operand.height + 1 };
    }
    case "compare":
      return leaf(compileCompare(condition, scope, state));
    case "isNull":
      return leaf(`${column(condition.subject, scope, state)} IS NULL`);
    case "unknown":
      return leaf(state.dialect.literals.unknown);
    case "like":
      return leaf(
        state.dialect.like(column(condition.subject, scope, state), state.bind(condition.pattern, "text")),
      );
    case "in": {
      const subject = column(condition.subject, scope, state);
      const values = condition.values.map((value) => state.bind(value, condition.valueClass)).join(", ");
      const test = `${subject} IN (${values})`;
      return condition.orNull ? { sql: `(${test} OR ${subject} IS NULL)`, height: 2 } : leaf(test);
    }
    case "inSelect":
      return compileInSelect(condition, scope, state);
    case "includes":
      return leaf(compileIncludes(condition, scope, state));
  }
}

/**
 * Compiles a checked (plain, not extended) filter in `dialect`.
 * @throws Error for an extended filter: those are only evaluated in memory.
 */
export function compileFilter<V>(
  filter: CheckedFilter,
  dialect: SqlDialect<V>,
  options: SqlFilterOptions,
): SqlFilter<V> {
  if (filter.mode !== "filter")
    throw new Error("extended filters are evaluated in memory, not compiled to SQL");
  const state = new CompileState(dialect, options);
  const scope = new JoinScope(filter.object, options.alias, state);
  const where = compileCondition(filter.condition, scope, state).sql;
  return { where, params: state.params, joins: scope.joins };
}
