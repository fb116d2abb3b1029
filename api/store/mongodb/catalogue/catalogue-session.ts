/**
 * The catalogue part of a MongoDB session: a tenant's custom definitions (documents of
 * `custom_objects` and `custom_fields`, catalogue/catalogue-documents.ts) and the changes of its
 * records that a change of them makes (catalogue/catalogue-storage.ts), each call in the unit of
 * work's transaction when there is one. A thin shell: every filter and update is built by those
 * pure helpers; the catalogue version is the counters' (counter-session.ts).
 *
 * A catalogue change is writes only, no DDL (docs/mongodb-layout.md): the definitions, the
 * records' values, the guard writes of write-skew.ts. So "a failed definition creates nothing" is
 * the transaction's own rollback, and a unit of work run again starts from what was committed.
 */
import type { AnyBulkWriteOperation, ClientSession, Db, Document } from "mongodb";
import { uniquely } from "../../../../common/store/mongodb/driver-errors.ts";
import { COLLECTION } from "../../../../common/store/mongodb/layout.ts";
import { STANDARD_OBJECTS } from "../../../model/standard-objects.ts";
import {
  type CatalogueExport,
  type CatalogueReader,
  type CatalogueWriter,
  definitionsOf,
} from "../../ports/catalogue-port.ts";
import { catalogueCounterRef, type GuardUpdate } from "../write-skew.ts";
import {
  type CustomFieldDocument,
  type CustomObjectDocument,
  DEFINITION_ORDER,
  fieldDocument,
  importDocuments,
  objectDocument,
  savedFieldOf,
  savedObjectOf,
  tenantDefinitions,
} from "./catalogue-documents.ts";
import {
  catalogueGuards,
  ensureStorage,
  fillDefault,
  type ManyUpdate,
  type ManyWrite,
  markedFields,
  objectGates,
  objectRecords,
  referenceGatesOf,
  type StorageMarkerDocument,
  storageMarker,
  uniqueKeys,
  unmarkField,
  unsetField,
} from "./catalogue-storage.ts";

export type CatalogueMembers = Pick<CatalogueReader, "loadCustomDefinitions" | "exportCatalogue"> &
  Omit<CatalogueWriter, "bumpCatalogueVersion">;

const objectTaken = (name: string) => `an object named '${name}' exists already`;
const fieldTaken = (field: { objectName: string; name: string }) =>
  `${field.objectName} has a field named '${field.name}' already`;

/** The catalogue's members on `db`, in the unit of work of `session` when given. */
export function createCatalogueSession(db: Db, session: ClientSession | null): CatalogueMembers {
  const inUnit = session ? { session } : {};
  const objects = db.collection<CustomObjectDocument>(COLLECTION.customObjects);
  const fields = db.collection<CustomFieldDocument>(COLLECTION.customFields);
  const counters = db.collection(COLLECTION.counters);

  // Calls in one unit of work follow each other: a transaction's session takes one operation at a time.
  const updateMany = async (write: ManyUpdate) => {
    await db.collection(write.collection).updateMany(write.filter, write.update, inUnit);
  };
  const deleteMany = async (write: ManyWrite) => {
    await db.collection(write.collection).deleteMany(write.filter, inUnit);
  };
  const guard = async (updates: readonly GuardUpdate[]) => {
    for (const collection of new Set(updates.map((update) => update.collection))) {
      const operations: AnyBulkWriteOperation<Document>[] = updates
        .filter((update) => update.collection === collection)
        .map(({ filter, update, upsert }) => ({ updateOne: { filter, update, upsert } }));
      await db.collection(collection).bulkWrite(operations, { ordered: true, ...inUnit });
    }
  };
  const saveFields = async (documents: CustomFieldDocument[]) => {
    // insertMany refuses an empty list.
    if (documents.length > 0)
      await uniquely(
        () => fields.insertMany(documents, inUnit),
        // The index is the driver's, into this very list.
        (index) => fieldTaken(documents[index] as CustomFieldDocument),
      );
  };

  async function definitions(tenantId: string): Promise<CatalogueExport> {
    // The version before the definitions: outside a unit of work the reads are not one snapshot, and
    // a change committed between them must leave definitions newer than their version (a reader
    // caching by version then reads them again), never older.
    const version = (await counters.findOne(catalogueCounterRef(tenantId).filter, inUnit))?.n;
    const read = { ...inUnit, sort: DEFINITION_ORDER };
    const savedObjects = await objects.find(tenantDefinitions(tenantId), read).toArray();
    const savedFields = await fields.find(tenantDefinitions(tenantId), read).toArray();
    return {
      version: typeof version === "number" ? version : 0,
      objects: savedObjects.map(savedObjectOf),
      fields: savedFields.map(savedFieldOf),
    };
  }

  return {
    loadCustomDefinitions: async (tenantId) => definitionsOf(await definitions(tenantId)),
    exportCatalogue: definitions,

    // Nothing to create: the collections and indexes exist from the engine's opening, and an object's
    // fields are keys of its records' values (docs/mongodb-layout.md). What remains of "adds the fields
    // it lacks" is the records' values: each field new since the object's marker gets its default
    // where a record lacks it. No write gates: a standard object's definition is code, so a record
    // written against an older one comes from a process running older code, which no gate would stop;
    // two processes ensuring at once both write the marker, and the second runs again.
    async ensureObjectStorage(tenantId, object) {
      const marker = storageMarker(tenantId, object.id);
      const markers = db.collection<StorageMarkerDocument>(marker.collection);
      const plan = ensureStorage(
        tenantId,
        object,
        markedFields(await markers.findOne(marker.filter, inUnit)),
      );
      for (const fill of plan.fills) await updateMany(fill);
      if (plan.mark) await markers.updateOne(marker.filter, plan.mark, { upsert: true, ...inUnit });
    },

    async createCustomObject(tenantId, object) {
      // A new object: no record can have been written against an older definition of it, so no gate.
      const now = Date.now();
      await uniquely(
        () => objects.insertOne(objectDocument(tenantId, object, now), inUnit),
        () => objectTaken(object.name),
      );
      const custom = object.fields.filter((field) => field.custom);
      // Its storage is there already, empty: a new object's id has no records (a deleted one's went with it).
      await saveFields(custom.map((field) => fieldDocument(tenantId, object.id, field, now)));
    },

    async addCustomField(tenantId, object, field) {
      await guard(catalogueGuards(tenantId, object));
      await saveFields([fieldDocument(tenantId, object.id, field, Date.now())]);
      const fill = fillDefault(tenantId, object, field);
      if (fill) await updateMany(fill);
    },

    async deleteCustomObject(tenantId, object) {
      await guard(catalogueGuards(tenantId, object));
      await objects.deleteOne({ _id: object.id, t: tenantId }, inUnit);
      await fields.deleteMany({ t: tenantId, o: object.id }, inUnit);
      await deleteMany(objectRecords(tenantId, object));
      await deleteMany(uniqueKeys(tenantId, object.id));
      // Its records' reference gates go with them: a gate outlives no record (write-skew.ts). No write
      // refers to them meanwhile: an object referred to by a field is not deleted (the service's check).
      await deleteMany(referenceGatesOf(tenantId, object.id));
      // Its gates go with it (after the guard writes, which a record write of the object in flight
      // conflicts with all the same): nothing writes them once the object is gone.
      await deleteMany(objectGates(tenantId, object.id));
      await deleteMany(storageMarker(tenantId, object.id));
    },

    async deleteCustomField(tenantId, object, field) {
      await guard(catalogueGuards(tenantId, object));
      await fields.deleteOne({ _id: field.id, t: tenantId }, inUnit);
      await updateMany(unsetField(tenantId, object, field));
      await deleteMany(uniqueKeys(tenantId, object.id, field.id));
      const marker = storageMarker(tenantId, object.id);
      await db
        .collection<StorageMarkerDocument>(marker.collection)
        .updateOne(marker.filter, unmarkField(field), inUnit);
    },

    async setObjectTracked(tenantId, objectId, tracked) {
      // Tracking alters no record's definition (write-skew.ts): no gate.
      const result = await objects.updateOne({ _id: objectId, t: tenantId }, { $set: { tracked } }, inUnit);
      return result.matchedCount > 0;
    },

    async importCatalogue(tenantId, catalogue) {
      const documents = importDocuments(tenantId, catalogue, STANDARD_OBJECTS);
      if (documents.objects.length > 0)
        await uniquely(
          () => objects.insertMany(documents.objects, inUnit),
          (index) => objectTaken((documents.objects[index] as CustomObjectDocument).name),
        );
      await saveFields(documents.fields);
      if (catalogue.version > 0)
        await counters.updateOne(
          catalogueCounterRef(tenantId).filter,
          { $set: { n: catalogue.version } },
          { upsert: true, ...inUnit },
        );
    },
  };
}
