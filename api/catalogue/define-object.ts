/**
 * A custom object's definition (or one more field of an existing object) from
 * REST input, checked against the tenant's catalogue: names, clashes with
 * existing objects, generated GraphQL names and members. Pure.
 */
import { ConflictError, type ErrorDetail, ValidationError } from "../../common/errors.ts";
import type { Catalogue, FieldDef, ObjectDef } from "../model/catalogue.ts";
import { customMapping, isSameMapping } from "../model/custom-mapping.ts";
import { systemFields } from "../model/field-factory.ts";
import { FIXED_TYPE_NAMES, memberNamesOf, names, schemaNamesOf } from "../model/naming.ts";
import { defineField, NAME_PATTERN, nameProblem } from "./define-field.ts";
import type { AddFieldInput, ObjectInput } from "./definition-input.ts";

const lower = (names: Iterable<string>) => new Set([...names].map((name) => name.toLowerCase()));

/** The GraphQL members a field adds to its object. */
const membersOf = (field: FieldDef) =>
  field.type === "reference" ? [field.name, names.referenceId(field.name)] : [field.name];

/** Limits of definitions, from the configuration. */
export interface DefinitionLimits {
  /**
   * Most custom fields one object may have (CUSTOM_MAX_FIELDS_PER_OBJECT): each is a column, and
   * storage engines refuse a table past their own column limit (SQLite 2000, PostgreSQL 1600).
   */
  maxFieldsPerObject: number;
}

/**
 * The definition among `existing` whose storage some engine would take for `mapping`'s, if any.
 * Derived mappings meet only when two long names' digests do (custom-mapping.ts); this check is the
 * second line of defence, because the engines' DDL takes a table or column that exists for the one
 * to create (a catalogue change may run again whole), which would share it between two definitions.
 */
const sharingStorage = (existing: readonly { name: string; mapping: string }[], mapping: string) =>
  existing.find((definition) => isSameMapping(definition.mapping, mapping));

const storedAs = (name: string, mapping: string, other: string) =>
  `'${name}' would be stored as '${mapping}', where ${other} is stored`;

const tooManyFields = (limits: DefinitionLimits) =>
  `an object may have at most ${limits.maxFieldsPerObject} custom fields`;

/**
 * Builds a new custom object (tracked, with the five system fields).
 * @throws ValidationError listing every problem (more fields than `limits` allow is one, and stops
 * the fields' own checks); ConflictError when the name is taken, or the storage (mapping) it
 * would take is another object's.
 */
export function defineObject(catalogue: Catalogue, input: ObjectInput, limits: DefinitionLimits): ObjectDef {
  const problems: ErrorDetail[] = [];
  const badName = nameProblem(input.name);
  if (badName) problems.push({ path: "name", message: badName });
  const existing = catalogue.objects.find((object) => object.name.toLowerCase() === input.name.toLowerCase());
  if (existing) throw new ConflictError(`an object named '${existing.name}' exists already`);
  const taken = lower([
    ...FIXED_TYPE_NAMES,
    ...catalogue.objects.flatMap((object) => schemaNamesOf(object.name)),
  ]);
  const clash = schemaNamesOf(input.name).find((name) => taken.has(name.toLowerCase()));
  if (clash)
    problems.push({ path: "name", message: `'${input.name}' would clash with the GraphQL name '${clash}'` });

  if (input.fields.length > limits.maxFieldsPerObject) {
    problems.push({ path: "fields", message: `${input.fields.length} fields: ${tooManyFields(limits)}` });
    throw new ValidationError("the object definition is invalid", problems);
  }

  // Its fields may refer to the object itself, once it has a name an object can have.
  const extraTargets = NAME_PATTERN.test(input.name) ? [input.name] : [];
  const id = crypto.randomUUID();
  const fields = systemFields(input.name, id);
  const seen = lower(fields.flatMap(membersOf));
  input.fields.forEach((fieldInput, i) => {
    const draft = defineField(catalogue, { name: input.name, extraTargets }, fieldInput, `fields[${i}].`);
    problems.push(...draft.problems);
    if (!draft.field) {
      if (seen.has(fieldInput.name.toLowerCase()))
        problems.push({ path: `fields[${i}].name`, message: `'${fieldInput.name}' is repeated` });
      seen.add(fieldInput.name.toLowerCase());
      return;
    }
    const repeated = membersOf(draft.field).find((member) => seen.has(member.toLowerCase()));
    if (repeated)
      problems.push({
        path: `fields[${i}].name`,
        message: `'${repeated}' is already a field of ${input.name}`,
      });
    const sharing = sharingStorage(fields, draft.field.mapping);
    if (sharing && !repeated)
      problems.push({
        path: `fields[${i}].name`,
        message: storedAs(draft.field.name, draft.field.mapping, `the field '${sharing.name}'`),
      });
    for (const member of membersOf(draft.field)) seen.add(member.toLowerCase());
    fields.push(draft.field);
  });
  if (problems.length > 0) throw new ValidationError("the object definition is invalid", problems);
  const mapping = customMapping(input.name);
  const sharing = sharingStorage(catalogue.objects, mapping);
  if (sharing) throw new ConflictError(storedAs(input.name, mapping, `the object '${sharing.name}'`));

  const object: ObjectDef = {
    id,
    name: input.name,
    label: input.label ?? input.name,
    description: input.description ?? null,
    mapping,
    custom: true,
    tracked: true,
    fields,
  };
  const withObject = { ...catalogue, objects: [...catalogue.objects, object] };
  object.fields = object.fields.map((field) => withReverseName(withObject, field));
  return object;
}

/**
 * Builds one more custom field for an existing object (custom or standard).
 * @throws ValidationError listing every problem (the object having the most custom fields `limits`
 * allow is one); ConflictError when a member name is taken, or the storage (mapping) the field would
 * take is another field's of the object.
 */
export function defineAddedField(
  catalogue: Catalogue,
  input: AddFieldInput,
  limits: DefinitionLimits,
): { object: ObjectDef; field: FieldDef } {
  const object = catalogue.objects.find((candidate) => candidate.name === input.schemaName);
  if (!object) {
    throw new ValidationError("the field definition is invalid", [
      { path: "schemaName", message: `no object named '${input.schemaName}'` },
    ]);
  }
  const customFields = object.fields.filter((field) => field.custom).length;
  if (customFields >= limits.maxFieldsPerObject) {
    throw new ValidationError("the field definition is invalid", [
      {
        path: "schemaName",
        message: `${object.name} has ${customFields} custom fields already: ${tooManyFields(limits)}`,
      },
    ]);
  }
  const draft = defineField(catalogue, { name: object.name }, input, "");
  if (!draft.field) throw new ValidationError("the field definition is invalid", draft.problems);
  const taken = lower(memberNamesOf(catalogue, object));
  const clash = membersOf(draft.field).find((member) => taken.has(member.toLowerCase()));
  if (clash) throw new ConflictError(`${object.name} already has a member named '${clash}'`);
  const sharing = sharingStorage(object.fields, draft.field.mapping);
  if (sharing)
    throw new ConflictError(
      storedAs(draft.field.name, draft.field.mapping, `the field '${object.name}.${sharing.name}'`),
    );
  return { object, field: withReverseName(catalogue, draft.field) };
}

/** Gives a custom reference the list field its target shows: the source's name, or `<Source>_<Field>` when taken. */
function withReverseName(catalogue: Catalogue, field: FieldDef): FieldDef {
  if (field.type !== "reference" || !field.custom || !field.referenceTo) return field;
  const target = catalogue.objects.find((object) => object.name === field.referenceTo);
  if (!target) return field;
  const taken = lower(memberNamesOf(catalogue, target));
  const candidates = [field.objectName, `${field.objectName}_${field.name}`];
  const reverseName = candidates.find((candidate) => !taken.has(candidate.toLowerCase()));
  if (!reverseName) {
    throw new ConflictError(
      `${target.name} already has members named ${candidates.join(" and ")}; rename the field`,
    );
  }
  return { ...field, reverseName };
}
