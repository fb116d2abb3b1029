/** Builders of field and object definitions, shared by the standard objects and the custom-object REST. */
import { createHash } from "node:crypto";
import type { FieldDef, FieldType, ObjectDef } from "./catalogue.ts";

/** A UUID derived from `name` (same input, same id), for definitions every tenant shares. */
export function stableId(name: string): string {
  const hex = createHash("sha256").update(name).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** `JobStatus` → `job_status`. */
function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .toLowerCase();
}

export type FieldSpec = Partial<Omit<FieldDef, "name" | "objectName" | "type">> & { type: FieldType };

/** A field with every attribute defaulted: optional, writable, not unique, no limits. */
export function makeField(objectName: string, name: string, spec: FieldSpec): FieldDef {
  return {
    id: spec.id ?? stableId(`${objectName}.${name}`),
    name,
    objectName,
    label: spec.label ?? null,
    description: spec.description ?? null,
    type: spec.type,
    mapping: spec.mapping ?? snakeCase(name),
    required: spec.required ?? false,
    unique: spec.unique ?? false,
    readOnly: spec.readOnly ?? false,
    system: spec.system ?? false,
    custom: spec.custom ?? false,
    maxLength: spec.maxLength ?? (spec.type === "string" || spec.type === "url" ? 255 : null),
    precision: spec.precision ?? null,
    scale: spec.scale ?? null,
    items: spec.items ?? null,
    referenceTo: spec.referenceTo ?? null,
    reverseName: spec.reverseName ?? null,
    defaultValue: spec.defaultValue ?? null,
  };
}

/** The five fields every object has (seed §2.2 rule 1), with their ids derived from `idSeed`. */
export function systemFields(objectName: string, idSeed: string = objectName): FieldDef[] {
  const system = (name: string, spec: FieldSpec) =>
    makeField(objectName, name, {
      id: stableId(`${idSeed}.${name}`),
      required: true,
      readOnly: true,
      system: true,
      ...spec,
    });
  return [
    system("UID", { type: "id", mapping: "uid", unique: true }),
    system("CreatedDate", { type: "datetime", mapping: "created_date" }),
    system("LastModifiedDate", { type: "datetime", mapping: "last_modified_date" }),
    system("CreatedBy", { type: "reference", mapping: "created_by", referenceTo: "Users" }),
    system("LastModifiedBy", { type: "reference", mapping: "last_modified_by", referenceTo: "Users" }),
  ];
}

/** A standard object: tracked, mapped to its lower-case name, with the system fields first. */
export function standardObject(name: string, label: string, fields: Record<string, FieldSpec>): ObjectDef {
  return {
    id: stableId(`object:${name}`),
    name,
    label,
    description: null,
    mapping: name.toLowerCase(),
    custom: false,
    tracked: true,
    fields: [
      ...systemFields(name),
      ...Object.entries(fields).map(([field, spec]) => makeField(name, field, spec)),
    ],
  };
}
