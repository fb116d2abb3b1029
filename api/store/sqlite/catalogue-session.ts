/** The catalogue part of a SQLite session: custom definitions and the DDL of record storage. */
import type { Database } from "bun:sqlite";
import type { FieldDef, ObjectDef } from "../../model/catalogue.ts";
import {
  type CatalogueExport,
  type CatalogueReader,
  type CatalogueWriter,
  definitionsOf,
} from "../ports/catalogue-port.ts";
import { addColumn, dropColumn, dropTable, ensureObjectTable, tableName } from "./catalogue-ddl.ts";
import { uniquely } from "./constraint-errors.ts";

/** Builds the catalogue methods over `db`; `storageNo` maps a tenant id to its table-name number. */
export function createCatalogueSession(
  db: Database,
  storageNo: (tenantId: string) => number,
): CatalogueReader & CatalogueWriter {
  const q = {
    version: db.query<{ version: number }, [string]>(
      "SELECT version FROM catalogue_versions WHERE tenant_id = ?",
    ),
    bump: db.query<{ version: number }, [string]>(
      `INSERT INTO catalogue_versions (tenant_id, version) VALUES (?, 1)
       ON CONFLICT (tenant_id) DO UPDATE SET version = version + 1 RETURNING version`,
    ),
    objects: db.query<{ definition: string; tracked: number; created_at: number }, [string]>(
      "SELECT definition, tracked, created_at FROM custom_objects WHERE tenant_id = ? ORDER BY created_at, id",
    ),
    fields: db.query<{ definition: string; created_at: number }, [string]>(
      "SELECT definition, created_at FROM custom_fields WHERE tenant_id = ? ORDER BY created_at, id",
    ),
    setVersion: db.query(
      `INSERT INTO catalogue_versions (tenant_id, version) VALUES (?, ?)
       ON CONFLICT (tenant_id) DO UPDATE SET version = excluded.version`,
    ),
    insertObject: db.query(
      "INSERT INTO custom_objects (tenant_id, id, name, definition, tracked, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    insertField: db.query(
      "INSERT INTO custom_fields (tenant_id, id, object_name, name, definition, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    deleteObject: db.query("DELETE FROM custom_objects WHERE tenant_id = ? AND id = ?"),
    deleteObjectFields: db.query("DELETE FROM custom_fields WHERE tenant_id = ? AND object_name = ?"),
    deleteField: db.query("DELETE FROM custom_fields WHERE tenant_id = ? AND id = ?"),
    track: db.query("UPDATE custom_objects SET tracked = ? WHERE tenant_id = ? AND id = ?"),
  };
  const table = (tenantId: string, object: ObjectDef) => tableName(storageNo(tenantId), object);
  const savedObjects = (tenantId: string) =>
    q.objects.all(tenantId).map((row) => ({
      object: { ...(JSON.parse(row.definition) as ObjectDef), tracked: row.tracked === 1 },
      createdAt: row.created_at,
    }));
  const savedFields = (tenantId: string) =>
    q.fields
      .all(tenantId)
      .map((row) => ({ field: JSON.parse(row.definition) as FieldDef, createdAt: row.created_at }));
  /** The tenant's saved definitions, read at one moment (the reads share the connection's snapshot). */
  const exported = (tenantId: string): CatalogueExport => ({
    version: q.version.get(tenantId)?.version ?? 0,
    objects: savedObjects(tenantId),
    fields: savedFields(tenantId),
  });

  return {
    catalogueVersion: async (tenantId) => q.version.get(tenantId)?.version ?? 0,
    loadCustomDefinitions: async (tenantId) => definitionsOf(exported(tenantId)),
    exportCatalogue: async (tenantId) => exported(tenantId),
    ensureObjectStorage: async (tenantId, object) => ensureObjectTable(db, storageNo(tenantId), object),
    createCustomObject: async (tenantId, object) => {
      saveObject(tenantId, object, Date.now());
      for (const field of object.fields.filter((f) => f.custom)) saveField(tenantId, field);
      ensureObjectTable(db, storageNo(tenantId), object);
    },
    addCustomField: async (tenantId, object, field) => {
      saveField(tenantId, field);
      addColumn(db, table(tenantId, object), field);
    },
    deleteCustomObject: async (tenantId, object) => {
      q.deleteObject.run(tenantId, object.id);
      q.deleteObjectFields.run(tenantId, object.name);
      dropTable(db, table(tenantId, object));
    },
    deleteCustomField: async (tenantId, object, field) => {
      q.deleteField.run(tenantId, field.id);
      dropColumn(db, table(tenantId, object), field);
    },
    setObjectTracked: async (tenantId, objectId, tracked) =>
      q.track.run(tracked ? 1 : 0, tenantId, objectId).changes > 0,
    bumpCatalogueVersion: async (tenantId) => q.bump.get(tenantId)?.version ?? 0,
    importCatalogue: async (tenantId, catalogue) => {
      for (const { object, createdAt } of catalogue.objects) saveObject(tenantId, object, createdAt);
      for (const { field, createdAt } of catalogue.fields) saveField(tenantId, field, createdAt);
      if (catalogue.version > 0) q.setVersion.run(tenantId, catalogue.version);
    },
  };

  /** Saves a custom object's definition (its fields are saved apart). */
  function saveObject(tenantId: string, object: ObjectDef, createdAt: number): void {
    const { fields, tracked, ...definition } = object;
    const json = JSON.stringify({ ...definition, fields: [] });
    uniquely(`an object named '${object.name}' exists already`, () =>
      q.insertObject.run(tenantId, object.id, object.name, json, tracked ? 1 : 0, createdAt),
    );
  }

  function saveField(tenantId: string, field: FieldDef, createdAt = Date.now()): void {
    uniquely(`${field.objectName} has a field named '${field.name}' already`, () =>
      q.insertField.run(tenantId, field.id, field.objectName, field.name, JSON.stringify(field), createdAt),
    );
  }
}
