/**
 * Values in compiled pipelines, as the record codec stores what they are compared with
 * (../record-codec.ts): a literal of the checked tree → the BSON value it is compared as, and a
 * sort key read back from a listed document ↔ the JSON value a cursor carries.
 */
import type { ScalarValue, ValueClass } from "../../../eql/checked-filter.ts";

/** A value placed in a compiled query: compared with a stored value of the same class. */
export type QueryValue = string | number | boolean | Date;

/**
 * A checked literal (its stored representation, checked-filter.ts) → the value a query compares
 * it as: every number a double (decimals are compared through their double shadow), a datetime a
 * BSON date, the rest as they are.
 */
export function queryValue(value: ScalarValue, valueClass: ValueClass): QueryValue {
  if (valueClass === "number") return Number(value);
  if (valueClass === "datetime") return new Date(value as number);
  return value;
}

/** A sort key as a listed document holds it → the JSON value cursors carry (a date in ms, a boolean 0/1). */
export function sortKeyValue(raw: unknown): string | number | null {
  if (raw === null || raw === undefined) return null;
  if (raw instanceof Date) return raw.getTime();
  if (typeof raw === "boolean") return raw ? 1 : 0;
  if (typeof raw === "number" || typeof raw === "string") return raw;
  // An unpromoted numeric BSON value (Int32, Long, Double) reads back as its number.
  return Number((raw as { valueOf(): unknown }).valueOf());
}

/** A cursor's sort key (from `sortKeyValue`) → the value the keyset compares in `valueClass`. */
export function keysetValue(key: string | number, valueClass: ValueClass): QueryValue {
  if (valueClass === "boolean") return key === 1 || key === "1" || key === "true";
  return queryValue(key, valueClass);
}
