/**
 * A tenant's catalogue, read and changed. Reads check the stored version on
 * every call (one indexed lookup) and rebuild only when it moved, so a change
 * made through any API process is seen by the next request; a whole read of
 * the store may take the last catalogue read unchecked and check the version
 * in its own statement instead (graphql-service.ts). Changes run in one
 * unit of work each: definitions and storage commit together or not at all.
 */

import { setNewest } from "../../common/bounded-map.ts";
import { ConflictError, NotFoundError, ValidationError } from "../../common/errors.ts";
import { assembleCatalogue } from "../model/assemble-catalogue.ts";
import type { Catalogue, FieldDef, ObjectDef } from "../model/catalogue.ts";
import { STANDARD_OBJECTS } from "../model/standard-objects.ts";
import type { Store, StoreWriter } from "../store/store.ts";
import { type DefinitionLimits, defineAddedField, defineObject } from "./define-object.ts";
import type { AddFieldInput, ObjectInput } from "./definition-input.ts";

export interface CatalogueServiceDeps {
  store: Store;
  /** How many tenants' catalogues to keep in memory (least recently used go first). */
  cacheSize: number;
  /** Limits of new definitions. */
  limits: DefinitionLimits;
}

export type CatalogueService = ReturnType<typeof createCatalogueService>;

export function createCatalogueService({ store, cacheSize, limits }: CatalogueServiceDeps) {
  const cache = new Map<string, Catalogue>();

  const remember = (catalogue: Catalogue) => {
    setNewest(cache, catalogue.tenantId, catalogue, cacheSize);
    return catalogue;
  };

  /**
   * Runs a catalogue change against the catalogue as committed. The version is bumped first: that
   * write is what makes a tenant's catalogue changes wait for one another (an engine whose units
   * overlap refuses the later writer of the version, and its unit runs again), so a change never
   * works from definitions another one is replacing, such as a field added to a table being dropped.
   */
  async function change<T>(
    tenantId: string,
    work: (tx: StoreWriter, catalogue: Catalogue) => Promise<T>,
  ): Promise<T> {
    return store.unitOfWork(async (tx) => {
      await tx.bumpCatalogueVersion(tenantId);
      const catalogue = assembleCatalogue(tenantId, await tx.loadCustomDefinitions(tenantId));
      return work(tx, catalogue);
    });
  }

  const customObject = (catalogue: Catalogue, id: string): ObjectDef => {
    const object = catalogue.objects.find((candidate) => candidate.custom && candidate.id === id);
    if (!object) throw new NotFoundError(`no custom object with id '${id}'`);
    return object;
  };

  return {
    /**
     * The tenant's catalogue as this process last read it, not checked against the store (another
     * process may have changed it since): for a read that checks the version itself.
     */
    lastRead(tenantId: string): Catalogue | undefined {
      const cached = cache.get(tenantId);
      return cached && remember(cached);
    },

    /** The tenant's current catalogue. */
    async get(tenantId: string): Promise<Catalogue> {
      const version = await store.catalogueVersion(tenantId);
      const cached = cache.get(tenantId);
      if (cached && cached.version === version) return remember(cached);
      return remember(assembleCatalogue(tenantId, await store.loadCustomDefinitions(tenantId)));
    },

    /** Creates the record storage of the standard objects for a tenant (new, or after an upgrade). */
    async ensureStandardStorage(tenantId: string, tx?: StoreWriter): Promise<void> {
      const ensure = async (writer: StoreWriter) => {
        for (const object of STANDARD_OBJECTS) await writer.ensureObjectStorage(tenantId, object);
      };
      await (tx ? ensure(tx) : store.unitOfWork(ensure));
    },

    createObject: (tenantId: string, input: ObjectInput): Promise<ObjectDef> =>
      change(tenantId, async (tx, catalogue) => {
        const object = defineObject(catalogue, input, limits);
        await tx.createCustomObject(tenantId, object);
        return object;
      }),

    addField: (tenantId: string, input: AddFieldInput): Promise<FieldDef> =>
      change(tenantId, async (tx, catalogue) => {
        const { object, field } = defineAddedField(catalogue, input, limits);
        await tx.addCustomField(tenantId, object, field);
        return field;
      }),

    deleteObject: (tenantId: string, objectId: string): Promise<void> =>
      change(tenantId, async (tx, catalogue) => {
        const object = customObject(catalogue, objectId);
        const referrers = catalogue.objects
          .flatMap((other) => other.fields)
          .filter(
            (field) => field.referenceTo === object.name && field.objectName !== object.name && !field.system,
          );
        if (referrers.length > 0) {
          const list = referrers.map((field) => `${field.objectName}.${field.name}`).join(", ");
          throw new ConflictError(`${object.name} is referenced by ${list}; delete those fields first`);
        }
        await tx.deleteCustomObject(tenantId, object);
      }),

    deleteField: (tenantId: string, fieldId: string): Promise<void> =>
      change(tenantId, async (tx, catalogue) => {
        for (const object of catalogue.objects) {
          const field = object.fields.find((candidate) => candidate.id === fieldId);
          if (!field) continue;
          if (!field.custom)
            throw new ValidationError("only custom fields can be deleted", [
              { path: "id", message: "a standard or system field" },
            ]);
          await tx.deleteCustomField(tenantId, object, field);
          return;
        }
        throw new NotFoundError(`no field with id '${fieldId}'`);
      }),

    setTracked: (tenantId: string, objectId: string, tracked: boolean): Promise<ObjectDef> =>
      change(tenantId, async (tx, catalogue) => {
        const object = customObject(catalogue, objectId);
        await tx.setObjectTracked(tenantId, object.id, tracked);
        return { ...object, tracked };
      }),
  };
}
