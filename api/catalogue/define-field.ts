/**
 * A custom field's definition from its REST input: validated against the
 * column rules of SPEC.md §6 and the catalogue, every problem collected.
 * Pure: input and catalogue in, a FieldDef or the problems out.
 */
import type { ErrorDetail } from "../../common/errors.ts";
import { EQL_RESERVED_WORDS, isReservedWord } from "../eql/reserved-words.ts";
import {
  type Catalogue,
  CUSTOM_FIELD_TYPES,
  type CustomFieldType,
  type FieldDef,
} from "../model/catalogue.ts";
import { customMapping } from "../model/custom-mapping.ts";
import { makeField } from "../model/field-factory.ts";
import {
  FieldValueError,
  parseBigDecimal,
  parseInstant,
  parseInt32,
  parseLocalDate,
  parseLocalTime,
} from "../model/field-values.ts";
import type { FieldInput } from "./definition-input.ts";

export const NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]*$/;
const NAME_RULE = "letters, digits and underscores, starting with a letter";

/**
 * Names every JavaScript object answers to (Object.prototype's members that fit NAME_PATTERN:
 * constructor, toString, valueOf, ...). Records and inputs are plain objects keyed by field name,
 * so a field named so would read, where it is absent, as that member: a function, not null.
 */
const OBJECT_MEMBER_NAMES: ReadonlySet<string> = new Set(
  Object.getOwnPropertyNames(Object.prototype).filter((name) => NAME_PATTERN.test(name)),
);

/** What is wrong with `name` as the name of an object or a field, or null when it may be one. */
export function nameProblem(name: string): string | null {
  if (!NAME_PATTERN.test(name)) return `'${name}' is not a valid name: ${NAME_RULE}`;
  if (OBJECT_MEMBER_NAMES.has(name))
    return `'${name}' is reserved: every object of the service's runtime has a member of that name (reserved: ${[...OBJECT_MEMBER_NAMES].join(", ")})`;
  return null;
}

const MAX_LENGTH: Partial<Record<CustomFieldType, { default: number; max: number }>> = {
  string: { default: 255, max: 255 },
  url: { default: 2048, max: 2048 },
  textarea: { default: 32_768, max: 131_072 },
};
/**
 * The longest default a field may have, in characters (its text form: a multipicklist's `a;b`).
 * Every record that does not give the field stores the default, and every change of such a record
 * carries it to the change feed and webhooks: a long one would multiply what a small write stores
 * and sends. The records there when the field is added get it too: written into each on MongoDB;
 * on SQLite read from the table's definition until the table is rewritten (dropping any of its
 * columns does), which then writes it into each row. A field's own maxLength, which may be far
 * longer, bounds values given, not this.
 */
export const MAX_DEFAULT_LENGTH = 255;
const UNIQUE_TYPES: ReadonlySet<string> = new Set([
  "string",
  "url",
  "int",
  "decimal",
  "date",
  "datetime",
  "time",
  "reference",
]);

export interface FieldOwner {
  /** The object the field goes on. */
  name: string;
  /** Object names a reference may target besides the catalogue's (the object being created). */
  extraTargets?: string[];
}

export interface FieldDraft {
  field: FieldDef | null;
  problems: ErrorDetail[];
}

/** Validates `input` as a custom field of `owner`; `path` prefixes the problems' paths. */
export function defineField(
  catalogue: Catalogue,
  owner: FieldOwner,
  input: FieldInput,
  path: string,
): FieldDraft {
  const problems: ErrorDetail[] = [];
  const problem = (at: string, message: string) => problems.push({ path: `${path}${at}`, message });
  const { column } = input;

  const badName = nameProblem(input.name);
  if (badName) problem("name", badName);
  else if (isReservedWord(input.name)) {
    problem(
      "name",
      `'${input.name}' is a word of the filter language, so filters could not name the field; reserved (in any case): ${EQL_RESERVED_WORDS.join(", ")}`,
    );
  }
  if (!(CUSTOM_FIELD_TYPES as readonly string[]).includes(column.type)) {
    problem("column.type", `unknown column type '${column.type}'; known: ${CUSTOM_FIELD_TYPES.join(", ")}`);
    return { field: null, problems };
  }
  const type = column.type as CustomFieldType;
  const limits = MAX_LENGTH[type];
  if (column.maxLength !== undefined && !limits)
    problem("column.maxLength", `maxLength applies to string, url and textarea only`);
  if (limits && column.maxLength !== undefined && column.maxLength > limits.max) {
    problem("column.maxLength", `at most ${limits.max} for ${type}`);
  }
  if ((column.precision !== undefined || column.scale !== undefined) && type !== "decimal") {
    problem("column.precision", "precision and scale apply to decimal only");
  }
  const precision = type === "decimal" ? (column.precision ?? 18) : null;
  const scale = type === "decimal" ? (column.scale ?? 2) : null;
  if (precision !== null && scale !== null && scale > precision)
    problem("column.scale", "scale cannot exceed precision");

  const isPicklist = type === "picklist" || type === "multipicklist";
  const items = isPicklist ? [...(column.items ?? [])] : null;
  if (isPicklist && (items?.length ?? 0) === 0) problem("column.items", `a ${type} needs at least one item`);
  if (!isPicklist && column.items !== undefined)
    problem("column.items", "items apply to picklist and multipicklist only");
  const duplicates = (items ?? []).filter((item, i, all) => all.indexOf(item) !== i);
  if (duplicates.length > 0)
    problem("column.items", `duplicate items: ${[...new Set(duplicates)].join(", ")}`);
  if (isPicklist && (items ?? []).some((item) => item.includes(";")))
    problem("column.items", "items cannot contain ';'");

  const target = column.referenceSchemaName;
  if (type === "reference") {
    const targets = [...catalogue.objects.map((o) => o.name), ...(owner.extraTargets ?? [])];
    if (!target) problem("column.referenceSchemaName", "a reference needs referenceSchemaName");
    else if (!targets.includes(target)) {
      problem("column.referenceSchemaName", `no object named '${target}'; known: ${targets.join(", ")}`);
    }
  } else if (target !== undefined)
    problem("column.referenceSchemaName", "referenceSchemaName applies to reference only");

  if (column.unique && !UNIQUE_TYPES.has(type)) problem("column.unique", `a ${type} field cannot be unique`);
  if (column.unique && column.defaultValue != null)
    problem("column.defaultValue", "a unique field cannot have a default");

  let defaultValue: FieldDef["defaultValue"] = null;
  const defaultProblem = column.defaultValue == null ? null : defaultTextProblem(column.defaultValue);
  if (defaultProblem) problem("column.defaultValue", defaultProblem);
  else if (column.defaultValue != null) {
    try {
      defaultValue = coerceDefault(
        type,
        column.defaultValue,
        items,
        limits ? (column.maxLength ?? limits.default) : null,
      );
    } catch (error) {
      if (!(error instanceof FieldValueError)) throw error;
      problem("column.defaultValue", error.message);
    }
  }
  if (problems.length > 0) return { field: null, problems };

  const field = makeField(owner.name, input.name, {
    id: crypto.randomUUID(),
    type,
    label: input.label ?? null,
    description: input.description ?? null,
    mapping: customMapping(input.name),
    required: column.required ?? false,
    unique: column.unique ?? false,
    custom: true,
    maxLength: limits ? (column.maxLength ?? limits.default) : null,
    precision,
    scale,
    items,
    referenceTo: type === "reference" ? (target ?? null) : null,
    defaultValue,
  });
  return { field, problems };
}

/** What is wrong with a default as text, whatever the type: too long, or holding U+0000. */
function defaultTextProblem(value: string | number | boolean): string | null {
  if (typeof value !== "string") return null;
  if (value.length > MAX_DEFAULT_LENGTH)
    return `${value.length} characters: a default may have at most ${MAX_DEFAULT_LENGTH}`;
  // SQLite keeps a default in its table's definition, as a literal, which U+0000 would end;
  // PostgreSQL's text cannot hold it at all.
  return value.includes("\u0000") ? "a default cannot hold the NUL character (U+0000)" : null;
}

function coerceDefault(
  type: CustomFieldType,
  value: string | number | boolean,
  items: string[] | null,
  maxLength: number | null,
): FieldDef["defaultValue"] {
  const fail = (message: string): never => {
    throw new FieldValueError(message);
  };
  switch (type) {
    case "boolean":
      return typeof value === "boolean" ? value : fail("expected true or false");
    case "int":
      return parseInt32(value);
    case "decimal":
      return parseBigDecimal(value);
    case "date":
      return parseLocalDate(value);
    case "time":
      return parseLocalTime(value);
    case "datetime":
      return parseInstant(value);
    case "reference":
      return fail("a reference cannot have a default");
    case "picklist":
    case "multipicklist": {
      const values = type === "multipicklist" ? String(value).split(";") : [String(value)];
      const unknown = values.filter((v) => !items?.includes(v));
      return unknown.length > 0 ? fail(`not among the items: ${unknown.join(", ")}`) : String(value);
    }
    default:
      if (typeof value !== "string") return fail("expected a string");
      return maxLength !== null && value.length > maxLength
        ? fail(`longer than maxLength ${maxLength}`)
        : value;
  }
}
