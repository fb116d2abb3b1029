/** Catalogue definitions as the REST answers show them: exactly the seed's §2.2 records. */
import type { FieldDef, ObjectDef } from "../model/catalogue.ts";

const schemaView = (object: ObjectDef) => ({
  name: object.name,
  description: object.description,
  label: object.label,
  mapping: object.mapping,
  id: object.id,
});

export const fieldView = (field: FieldDef) => ({
  id: field.id,
  name: field.name,
  schemaName: field.objectName,
  label: field.label,
  description: field.description,
  fieldType: field.type,
  mapping: field.mapping,
  referenceSchemaName: field.referenceTo,
  referenceSchemaFieldName: field.referenceTo === null ? null : "UID",
  required: field.required,
  upsertKey: field.unique,
  accessMode: field.readOnly ? "read_only" : "read_write",
  readOnly: field.readOnly,
  maxLength: field.maxLength,
  precision: field.precision,
  scale: field.scale,
});

export const objectView = (object: ObjectDef) => ({
  schema: schemaView(object),
  fields: object.fields.map(fieldView),
});
