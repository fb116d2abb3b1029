/**
 * Values written into a statement's text instead of bound, each as the
 * server would have typed the bound value: text untyped (it takes the type
 * of the column it meets, as Bun binds a string), a safe integer as an
 * integer constant (int4, or int8 past int4's range, as Bun binds a whole
 * number), any other number as float8, truth values and NULL as themselves.
 * Text is an escape string constant (`E'…'`) with its backslashes and quotes
 * doubled, which reads the same whatever `standard_conforming_strings` says.
 */
import { nulInTextError } from "./pg-errors.ts";

/** A value a literal can hold. */
export type LiteralValue = string | number | boolean | null;

/** `value` as SQL text. Text holding U+0000 is refused as bound text is (a ValidationError), before it could cut the statement short. */
export function sqlLiteral(value: LiteralValue): string {
  if (value === null) return "NULL";
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (typeof value === "number") return Number.isSafeInteger(value) ? String(value) : `'${value}'::float8`;
  if (value.includes("\u0000")) throw nulInTextError();
  return `E'${value.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}
