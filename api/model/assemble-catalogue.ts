/** Standard objects + a tenant's stored custom definitions → its Catalogue. Pure. */
import type { Catalogue, CustomDefinitions, ObjectDef } from "./catalogue.ts";
import { systemFields } from "./field-factory.ts";
import { STANDARD_OBJECTS } from "./standard-objects.ts";

export function assembleCatalogue(tenantId: string, definitions: CustomDefinitions): Catalogue {
  const customFieldsOf = (object: string) =>
    definitions.fields.filter((field) => field.objectName === object);
  const standard = STANDARD_OBJECTS.map((object) => ({
    ...object,
    fields: [...object.fields, ...customFieldsOf(object.name)],
  }));
  const custom = definitions.objects.map(
    (object): ObjectDef => ({
      ...object,
      fields: [...systemFields(object.name, object.id), ...customFieldsOf(object.name)],
    }),
  );
  return { tenantId, version: definitions.version, objects: [...standard, ...custom] };
}
