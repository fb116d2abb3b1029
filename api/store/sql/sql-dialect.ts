/**
 * What differs between the SQL engines the shared compilers (compile-filter.ts,
 * list-plan.ts) write for: how a value is bound, how a decimal is compared, the
 * null-safe equality, the ASCII-case-insensitive LIKE, a multipicklist's
 * membership test, the truth literals and where NULLs sort. Everything else
 * (joins, sub-queries, three-valued logic, keysets) is the compilers' own.
 *
 * Placeholders are written `?` in the order their values are bound, whatever
 * the engine: a compiled piece is cached and placed in statements at different
 * positions, so only the finished statement can number them. An engine whose
 * driver wants `$1, $2, …` renumbers the finished text (`statement`).
 */
import type { ScalarValue, ValueClass } from "../../eql/checked-filter.ts";
import type { FieldDef } from "../../model/catalogue.ts";

/** A SQL engine's spelling of EQL's semantics; `V` is what its driver binds. */
export interface SqlDialect<V> {
  /** A literal in `valueClass` → the value bound for it (SQLite binds booleans as 0/1). */
  bindValue(value: ScalarValue, valueClass: ValueClass): V;
  /** The placeholder of a bound value (`bindValue`'s result): `?`, or `?` wrapped in a cast. */
  placeholder(bound: V): string;
  /**
   * A field's column as EQL compares and orders it: every number class value as an IEEE double
   * (a decimal column converted), the rest as stored.
   */
  comparable(column: string, field: FieldDef): string;
  /**
   * A field's column as a sort key: ordered as EQL compares (`comparable`), and read back as a
   * value the store port's sort keys hold (a string, a number or null) that binds again in a keyset.
   */
  sortKey(column: string, field: FieldDef): string;
  /** The SQL operators of null-safe equality and inequality between two columns. */
  readonly nullSafe: { equal: string; notEqual: string };
  /** `subject` matches the bound LIKE `pattern` (`\` escapes), folding ASCII case only. */
  like(subject: string, pattern: string): string;
  /** The multipicklist column `list` holds one of `values` (placeholders); unknown when `list` is NULL. `alias` is free for the test's own use. */
  includesAny(list: string, values: readonly string[], alias: string): string;
  /** The truth literals and the unknown one. */
  readonly literals: { true: string; false: string; unknown: string };
  /**
   * A sort key in `direction`, NULLs lowest (first ascending, last descending). `neverNull`: the key
   * cannot be NULL (a record's own UID), so the NULL placement may be left out, which lets an engine
   * whose indexes put NULLs elsewhere still read the order from its index.
   */
  orderTerm(key: string, direction: "ASC" | "DESC", neverNull?: boolean): string;
  /** The finished statement text in the driver's placeholders (`?` numbered `$1, $2, …` or left as is). */
  statement(text: string): string;
}
