/**
 * Checks one operation's input against its object (SPEC.md §5, STANDARD_OBJECTS.md):
 * text that is not well-formed Unicode, lengths (rejected, never truncated), picklist values, decimal precision,
 * required fields (the standard objects' own rules, End ≥ Start and the
 * like, are in standard-behaviours.ts). Pure: the input arrives already typed
 * (by the GraphQL scalars); every problem is listed.
 */
import type { ErrorDetail } from "../../common/errors.ts";
import type { FieldDef, ObjectDef } from "../model/catalogue.ts";
import type { FieldValue, RecordValues } from "../model/record-values.ts";
import { ILL_FORMED_TEXT, isWellFormedText } from "../model/well-formed-text.ts";

/** Problems of the values given for `object`'s fields (by field name). */
export function checkFieldValues(object: ObjectDef, values: RecordValues): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  for (const field of object.fields) {
    if (!(field.name in values)) continue;
    const message = checkValue(field, values[field.name] ?? null);
    if (message) problems.push({ path: field.name, message });
  }
  return problems;
}

function checkValue(field: FieldDef, value: FieldValue): string | null {
  if (value === null) return null;
  const texts = typeof value === "string" ? [value] : Array.isArray(value) ? value : [];
  if (!texts.every(isWellFormedText)) return ILL_FORMED_TEXT;
  if (field.maxLength !== null && typeof value === "string" && [...value].length > field.maxLength) {
    return `is ${[...value].length} characters long; at most ${field.maxLength} are allowed`;
  }
  if (field.type === "picklist" && !field.items?.includes(value as string)) {
    return `'${value}' is not one of: ${field.items?.join(", ")}`;
  }
  if (field.type === "multipicklist") {
    const unknown = (value as string[]).filter((item) => !field.items?.includes(item));
    if (unknown.length > 0)
      return `${unknown.map((u) => `'${u}'`).join(", ")} not among: ${field.items?.join(", ")}`;
  }
  if (field.type === "decimal" && field.precision !== null && field.scale !== null) {
    const [integer = "", fraction = ""] = String(value).replace("-", "").split(".");
    if (fraction.length > field.scale) return `has ${fraction.length} decimals; at most ${field.scale}`;
    if (integer.replace(/^0+/, "").length > field.precision - field.scale) {
      return `has too many digits for precision ${field.precision} and scale ${field.scale}`;
    }
  }
  return null;
}

/** Required fields of `object` that `record` (the full record to be stored) lacks. */
export function missingRequired(object: ObjectDef, record: RecordValues): ErrorDetail[] {
  return object.fields
    .filter((field) => field.required && !field.system && !field.readOnly)
    .filter((field) => record[field.name] === null || record[field.name] === undefined)
    .map((field) => ({ path: field.name, message: "is required" }));
}
