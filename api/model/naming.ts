/**
 * The GraphQL names derived from object and field names (SPEC.md §3, §5, §7), in one place. Part of the
 * model's vocabulary, not of the GraphQL feature: they are the names an object and its fields take in every
 * API (schema, webhook and live subscriptions, record writes), and defining an object checks them for clashes.
 */
import type { Catalogue, FieldDef, ObjectDef } from "./catalogue.ts";
import { referenceIdMember } from "./member-name.ts";

const lowerFirst = (name: string) => name.charAt(0).toLowerCase() + name.slice(1);

export const names = {
  listField: (object: string) => lowerFirst(object),
  byIdField: (object: string) => `${lowerFirst(object)}ById`,
  connectionType: (object: string) => `${object}Connection`,
  edgeType: (object: string) => `${object}Edge`,
  newInput: (object: string) => `New${object}`,
  updateInput: (object: string) => `Update${object}`,
  insertField: (object: string) => `insert${object}`,
  updateField: (object: string) => `update${object}`,
  upsertField: (object: string) => `upsert${object}`,
  deleteField: (object: string) => `delete${object}`,
  subscriptionField: (object: string) => `schema${object}`,
  changeEventType: (object: string) => `${object}ChangeEvent`,
  changeRecordType: (object: string) => `${object}ChangeRecord`,
  /** The scalar member of a reference field: `Region` → `RegionId`. */
  referenceId: referenceIdMember,
};

/** Type names the schema always has, whatever the catalogue. */
export const FIXED_TYPE_NAMES = [
  "Query",
  "Mutation",
  "Subscription",
  "SchemaMutations",
  "PageInfo",
  "ChangeOperation",
  "Instant",
  "LocalDate",
  "LocalTime",
  "BigDecimal",
  "Duration",
  "String",
  "Int",
  "Float",
  "Boolean",
  "ID",
];

/** Every type name an object named `object` adds to the schema. */
function typeNamesOf(object: string): string[] {
  return [
    object,
    names.connectionType(object),
    names.edgeType(object),
    names.newInput(object),
    names.updateInput(object),
    names.changeEventType(object),
    names.changeRecordType(object),
  ];
}

/** Every type and root-field name an object adds: two objects clash when these intersect. */
export function schemaNamesOf(object: string): string[] {
  return [
    ...typeNamesOf(object),
    names.listField(object),
    names.byIdField(object),
    names.insertField(object),
    names.updateField(object),
    names.upsertField(object),
    names.deleteField(object),
    names.subscriptionField(object),
  ];
}

/** Fields of other objects that point at `target` and give it a reverse list. */
export function reverseReferences(catalogue: Catalogue, target: string): FieldDef[] {
  return catalogue.objects.flatMap((object) =>
    object.fields.filter((field) => field.referenceTo === target && field.reverseName !== null),
  );
}

/** Every member name `object` shows in GraphQL: fields, `<Ref>Id`s and reverse lists. */
export function memberNamesOf(catalogue: Catalogue, object: ObjectDef): string[] {
  return [
    ...object.fields.flatMap((field) =>
      field.type === "reference" ? [names.referenceId(field.name), field.name] : [field.name],
    ),
    ...reverseReferences(catalogue, object.name).map((field) => field.reverseName as string),
  ];
}
