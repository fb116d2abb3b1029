/**
 * The catalogue aggregate of the store port: a tenant's custom definitions
 * (custom objects, custom fields on any object), their version, and the
 * record storage each object needs.
 *
 * Catalogue changes are the port's only DDL. The members that change record
 * storage (`ensureObjectStorage`, `createCustomObject`, `addCustomField`,
 * `deleteCustomObject`, `deleteCustomField`) are written so that an engine
 * without transactional DDL can keep "a failed definition creates nothing":
 * - the definitions (metadata) are written in the unit of work, and commit
 *   or roll back with it;
 * - the storage change is idempotent: creating storage that exists (as the
 *   object or field describes it) or dropping storage that is gone is no
 *   error and changes nothing, so a unit of work run again, or one that
 *   follows a rolled-back one, finds no leftover in its way;
 * - a unit of work that throws leaves neither the definitions nor the
 *   storage behind: an engine with transactional DDL rolls both back; one
 *   without undoes the storage it created (or drops what it must only once
 *   the unit commits), before the unit of work rejects;
 * - once the member resolves, the unit of work can write and read the
 *   object's records in its new shape.
 * Catalogue changes of one tenant read the definitions, then write them, in
 * one unit of work (serializable, so two changes never both pass a check).
 */
import type { CustomDefinitions, FieldDef, ObjectDef } from "../../model/catalogue.ts";

/** A custom object as saved: its definition (`fields` empty, `tracked` as last set) and when it was made (ms). */
export interface SavedCustomObject {
  object: ObjectDef;
  createdAt: number;
}

/** A custom field as saved, and when it was made (ms). */
export interface SavedCustomField {
  field: FieldDef;
  createdAt: number;
}

/**
 * A tenant's custom definitions as saved, for copying a store: each with its creation time (the
 * order `loadCustomDefinitions` lists them in, so a copy lists them alike), and the catalogue
 * version.
 */
export interface CatalogueExport {
  version: number;
  objects: SavedCustomObject[];
  fields: SavedCustomField[];
}

/** The definitions a catalogue's export holds, as `loadCustomDefinitions` answers them (no creation times). */
export const definitionsOf = (saved: CatalogueExport): CustomDefinitions => ({
  version: saved.version,
  objects: saved.objects.map((entry) => entry.object),
  fields: saved.fields.map((entry) => entry.field),
});

/** Reads of a tenant's custom definitions. */
export interface CatalogueReader {
  /** The tenant's catalogue version: 0 until its first `bumpCatalogueVersion`. */
  catalogueVersion(tenantId: string): Promise<number>;
  /**
   * The tenant's custom objects (with `fields` empty, `tracked` as last set) and custom fields (of
   * custom and standard objects), each oldest first (those defined in the same millisecond in no
   * particular order), with the catalogue version they were read at.
   */
  loadCustomDefinitions(tenantId: string): Promise<CustomDefinitions>;
  /** Copying a store: the tenant's custom definitions as saved (oldest first, as listed above), and its version. */
  exportCatalogue(tenantId: string): Promise<CatalogueExport>;
}

/** Changes to a tenant's catalogue and its record storage (inside a unit of work). */
export interface CatalogueWriter {
  /**
   * DDL, idempotent, no definition written: creates the record storage of a standard object (every
   * field of `object`, unique fields unique, references indexed), or adds the fields it lacks
   * (existing records get each one's default value, or null).
   */
  ensureObjectStorage(tenantId: string, object: ObjectDef): Promise<void>;
  /**
   * DDL: saves a custom object's definition (and those of its custom fields) and creates its
   * storage for `object.fields`.
   * @throws ConflictError when the tenant has an object or field of that name already (compared
   * without regard to ASCII case).
   */
  createCustomObject(tenantId: string, object: ObjectDef): Promise<void>;
  /**
   * DDL: saves a custom field's definition and adds its storage to `object` (existing records get
   * its default value, or null: not a change of theirs, so no change-log entry); storage the field
   * has already is left as it is.
   * @throws ConflictError when `object` has a field of that name already.
   */
  addCustomField(tenantId: string, object: ObjectDef, field: FieldDef): Promise<void>;
  /** DDL: removes a custom object's definition, its fields' definitions, its storage and records. */
  deleteCustomObject(tenantId: string, object: ObjectDef): Promise<void>;
  /** DDL: removes a custom field's definition and its storage (its values). */
  deleteCustomField(tenantId: string, object: ObjectDef, field: FieldDef): Promise<void>;
  /** Sets a custom object's tracking; false when the tenant has no such object. */
  setObjectTracked(tenantId: string, objectId: string, tracked: boolean): Promise<boolean>;
  /** Increments and returns the tenant's catalogue version (1 the first time). */
  bumpCatalogueVersion(tenantId: string): Promise<number>;
  /**
   * Copying a store: saves the definitions of a tenant that has none yet, as exported (ids,
   * creation times, tracking), and sets its catalogue version. Metadata only: the objects' storage
   * is made by `ensureObjectStorage`, as for a standard object.
   * @throws ConflictError when the tenant has an object or field of one of those names already.
   */
  importCatalogue(tenantId: string, catalogue: CatalogueExport): Promise<void>;
}
