/**
 * A tenant's data model: its standard objects plus the custom objects and
 * fields it defined. Everything downstream (GraphQL schema, filters, storage,
 * webhooks) is derived from these values.
 */

/** Column types of SPEC.md §6, plus the internal ones of standard objects (`id`, `duration`). */
export const CUSTOM_FIELD_TYPES = [
  "string",
  "textarea",
  "url",
  "int",
  "decimal",
  "boolean",
  "date",
  "datetime",
  "time",
  "picklist",
  "multipicklist",
  "reference",
] as const;

export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];
/** `id`: the UID; `duration`: whole minutes (GraphQL scalar `Duration`). */
export type FieldType = CustomFieldType | "id" | "duration";

export interface FieldDef {
  /** UUID, stable for the field's life. */
  id: string;
  /** GraphQL name. A reference named `Region` appears as `RegionId` (the UID) and `Region` (the record). */
  name: string;
  /** The owning object's name. */
  objectName: string;
  label: string | null;
  description: string | null;
  type: FieldType;
  /**
   * Storage name: the column (`uid`, `created_date`, `job_status`, `__externalid`; a custom field's
   * as its object's, custom-mapping.ts). Saved with the definition, never derived again.
   */
  mapping: string;
  required: boolean;
  unique: boolean;
  /** System-managed, generated or derived: never written by clients. */
  readOnly: boolean;
  /** One of the five system fields every object has. */
  system: boolean;
  /** Defined by the tenant (on a custom or a standard object). */
  custom: boolean;
  maxLength: number | null;
  precision: number | null;
  scale: number | null;
  /** Allowed values of picklists and multipicklists. */
  items: string[] | null;
  /** Target object of a reference. */
  referenceTo: string | null;
  /** Name of the list field the target gets (`JobAllocations` on `Jobs`); null for none. */
  reverseName: string | null;
  /** Value used on insert when the input omits the field. */
  defaultValue: string | number | boolean | null;
}

export interface ObjectDef {
  id: string;
  /** Plural PascalCase for standard objects (`Jobs`); as defined for custom ones. */
  name: string;
  label: string;
  description: string | null;
  /**
   * Storage name: `jobs` for standard objects, `__<lowercase name>` for custom ones (a shortened
   * name and a digest past 63 bytes: custom-mapping.ts). Saved with the definition, never derived again.
   */
  mapping: string;
  custom: boolean;
  /** Custom objects fire webhooks only while tracked; standard ones always are. */
  tracked: boolean;
  fields: FieldDef[];
}

export interface Catalogue {
  tenantId: string;
  /** Increases with every change; caches key on it. */
  version: number;
  objects: ObjectDef[];
}

/**
 * A tenant's stored custom definitions, as saved: custom objects (with `fields`
 * empty) and every custom field, on custom and standard objects alike. The
 * catalogue service assembles them with the standard objects.
 */
export interface CustomDefinitions {
  version: number;
  objects: ObjectDef[];
  fields: FieldDef[];
}

/** Where a tenant's current catalogue is read (the catalogue service, api/catalogue/catalogue-service.ts). */
export interface CatalogueSource {
  get(tenantId: string): Promise<Catalogue>;
}

/** The object named `name` (exact), or undefined. */
export function findObject(catalogue: Catalogue, name: string): ObjectDef | undefined {
  return catalogue.objects.find((object) => object.name === name);
}

/** The field named `name` (exact) on `object`, or undefined. */
export function findField(object: ObjectDef, name: string): FieldDef | undefined {
  return object.fields.find((field) => field.name === name);
}
