/**
 * The catalogue aggregate of the store port: a tenant's custom definitions
 * (custom objects, custom fields on any object), their version, and the
 * record storage each object needs.
 */
import type { CustomDefinitions, FieldDef, ObjectDef } from "../../model/catalogue.ts";

/** Reads of a tenant's custom definitions. */
export interface CatalogueReader {
  /** The tenant's catalogue version: 0 until its first custom definition. */
  catalogueVersion(tenantId: string): Promise<number>;
  /**
   * The tenant's custom objects (with `fields` empty) and custom fields, each in the order they
   * were defined, with the catalogue version they were read at.
   */
  loadCustomDefinitions(tenantId: string): Promise<CustomDefinitions>;
}

/** Changes to a tenant's catalogue and its record storage (inside a unit of work). */
export interface CatalogueWriter {
  /** Creates the record storage of a standard object, or adds the fields it lacks. Idempotent. */
  ensureObjectStorage(tenantId: string, object: ObjectDef): Promise<void>;
  /** Saves a custom object's definition and creates its storage for `object.fields`. */
  createCustomObject(tenantId: string, object: ObjectDef): Promise<void>;
  /** Saves a custom field's definition and adds its storage to `object` (existing rows get its default). */
  addCustomField(tenantId: string, object: ObjectDef, field: FieldDef): Promise<void>;
  /** Removes a custom object's definition, its fields' definitions and its records. */
  deleteCustomObject(tenantId: string, object: ObjectDef): Promise<void>;
  /** Removes a custom field's definition and its values. */
  deleteCustomField(tenantId: string, object: ObjectDef, field: FieldDef): Promise<void>;
  /** Sets a custom object's tracking; false when the tenant has no such object. */
  setObjectTracked(tenantId: string, objectId: string, tracked: boolean): Promise<boolean>;
  /** Increments and returns the tenant's catalogue version. */
  bumpCatalogueVersion(tenantId: string): Promise<number>;
}
