/**
 * A tenant's custom definitions ↔ the documents of `custom_objects` and `custom_fields`
 * (common/store/mongodb/layout.ts), pure: definitions in, documents out, and back.
 *
 * A definition's properties are the document's own top-level fields (the layout's
 * "definition…"), beside the engine's: `_id` (the definition's id), `t` (the tenant), `nameKey`
 * (the name folded to ASCII lower case, which the unique indexes `custom_object_name` and
 * `custom_field_name` hold, so that names are unique regardless of ASCII case as on the other
 * engines: SQLite's NOCASE and PostgreSQL's lower() fold ASCII letters alike for the names the
 * catalogue allows), `o` (a field's object, by id: layout.ts says why by id) and `createdAt` (ms
 * since the epoch, a number as the port has it). An object's `fields` are not kept with it (they
 * are `custom_fields` documents of their own); its `tracked` is a field of its own, as the port
 * changes it alone.
 */

import { ValidationError } from "../../../../common/errors.ts";
import { foldAsciiCase } from "../../../../common/store/mongodb/fold-ascii-case.ts";
import type { FieldDef, ObjectDef } from "../../../model/catalogue.ts";
import type { CatalogueExport, SavedCustomField, SavedCustomObject } from "../../ports/catalogue-port.ts";

/** A custom object's document. */
export type CustomObjectDocument = Omit<ObjectDef, "id" | "fields"> & {
  _id: string;
  t: string;
  nameKey: string;
  createdAt: number;
};

/** A custom field's document (of a custom or a standard object). */
export type CustomFieldDocument = Omit<FieldDef, "id"> & {
  _id: string;
  t: string;
  o: string;
  nameKey: string;
  createdAt: number;
};

/**
 * The tenant's custom object named exactly `name` (a reference's target, FieldDef.referenceTo,
 * which names its object exactly): the unique index's folded key, which `custom_object_name` reads,
 * and the name itself. The record writes look a target up by it, so the document this file writes
 * and the filter that finds it are one file's.
 */
export const customObjectByName = (tenantId: string, name: string) => ({
  t: tenantId,
  nameKey: foldAsciiCase(name),
  name,
});

/** The tenant's definitions (both collections): the filter of its reads. */
export const tenantDefinitions = (tenantId: string) => ({ t: tenantId });

/** The port's order of definitions: oldest first, ties by id (as the SQL engines list them). */
export const DEFINITION_ORDER = { createdAt: 1, _id: 1 } as const;

/** The document saving `object` (its `fields` left out: each custom one is a document of its own). */
export function objectDocument(tenantId: string, object: ObjectDef, createdAt: number): CustomObjectDocument {
  const { id, fields: _fields, ...definition } = object;
  return { ...definition, _id: id, t: tenantId, nameKey: foldAsciiCase(object.name), createdAt };
}

/** The document saving `field`, a field of the object whose id is `objectId`. */
export function fieldDocument(
  tenantId: string,
  objectId: string,
  field: FieldDef,
  createdAt: number,
): CustomFieldDocument {
  const { id, ...definition } = field;
  return { ...definition, _id: id, t: tenantId, o: objectId, nameKey: foldAsciiCase(field.name), createdAt };
}

/** A custom object as saved (`fields` empty, `tracked` as last set), from its document. */
export function savedObjectOf(document: CustomObjectDocument): SavedCustomObject {
  const { _id, t: _t, nameKey: _nameKey, createdAt, ...definition } = document;
  return { object: { ...definition, id: _id, fields: [] }, createdAt };
}

/** A custom field as saved, from its document. */
export function savedFieldOf(document: CustomFieldDocument): SavedCustomField {
  const { _id, t: _t, o: _o, nameKey: _nameKey, createdAt, ...definition } = document;
  return { field: { ...definition, id: _id }, createdAt };
}

/**
 * The documents saving an exported catalogue into `tenantId`, as exported (ids, creation times,
 * tracking). A field names its object by name (FieldDef.objectName); its document names it by id:
 * one of the exported objects, else a standard object.
 * @throws ValidationError when a field names neither (an export of a store never holds one: the
 * fields of a deleted object are deleted with it).
 */
export function importDocuments(
  tenantId: string,
  catalogue: CatalogueExport,
  standardObjects: readonly ObjectDef[],
): { objects: CustomObjectDocument[]; fields: CustomFieldDocument[] } {
  const objectIds = new Map<string, string>();
  for (const object of standardObjects) objectIds.set(object.name, object.id);
  for (const { object } of catalogue.objects) objectIds.set(object.name, object.id);
  const fields = catalogue.fields.map(({ field, createdAt }) => {
    const objectId = objectIds.get(field.objectName);
    if (objectId === undefined)
      throw new ValidationError(`the catalogue's field ${field.objectName}.${field.name} names no object`, [
        { path: "fields", message: `no object named '${field.objectName}'` },
      ]);
    return fieldDocument(tenantId, objectId, field, createdAt);
  });
  return {
    objects: catalogue.objects.map(({ object, createdAt }) => objectDocument(tenantId, object, createdAt)),
    fields,
  };
}
