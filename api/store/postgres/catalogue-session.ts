/** The catalogue part of a PostgreSQL session: custom definitions and the DDL of record storage. */

import { uniquely } from "../../../common/store/postgres/pg-errors.ts";
import type { Runner } from "../../../common/store/postgres/runner.ts";
import type { FieldDef, ObjectDef } from "../../model/catalogue.ts";
import {
  type CatalogueExport,
  type CatalogueReader,
  type CatalogueWriter,
  definitionsOf,
} from "../ports/catalogue-port.ts";
import { addColumn, dropColumn, dropTable, ensureObjectTable } from "./catalogue-ddl.ts";
import type { SchemaLookup } from "./tenant-schemas.ts";

const SQL = {
  version: "SELECT version FROM catalogue_versions WHERE tenant_id = $1",
  bump: `INSERT INTO catalogue_versions (tenant_id, version) VALUES ($1, 1)
    ON CONFLICT (tenant_id) DO UPDATE SET version = catalogue_versions.version + 1 RETURNING version`,
  // One statement, so the version and the definitions come from one snapshot.
  definitions: `SELECT 'v' AS kind, version::text AS definition, NULL::boolean AS tracked, 0::int8 AS created_at,
        '' COLLATE "C" AS id
      FROM catalogue_versions WHERE tenant_id = $1
    UNION ALL SELECT 'o', definition, tracked, created_at, id FROM custom_objects WHERE tenant_id = $1
    UNION ALL SELECT 'f', definition, NULL, created_at, id FROM custom_fields WHERE tenant_id = $1
    ORDER BY kind, created_at, id`,
  insertObject: `INSERT INTO custom_objects (tenant_id, id, name, mapping, definition, tracked, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  insertField: `INSERT INTO custom_fields (tenant_id, id, object_name, name, definition, created_at)
    VALUES ($1, $2, $3, $4, $5, $6)`,
  deleteObject: "DELETE FROM custom_objects WHERE tenant_id = $1 AND id = $2",
  deleteObjectFields: "DELETE FROM custom_fields WHERE tenant_id = $1 AND lower(object_name) = lower($2)",
  deleteField: "DELETE FROM custom_fields WHERE tenant_id = $1 AND id = $2",
  track: "UPDATE custom_objects SET tracked = $1 WHERE tenant_id = $2 AND id = $3",
  setVersion: `INSERT INTO catalogue_versions (tenant_id, version) VALUES ($1, $2)
    ON CONFLICT (tenant_id) DO UPDATE SET version = excluded.version`,
};

interface DefinitionRow {
  kind: "v" | "o" | "f";
  definition: string;
  tracked: boolean | null;
  created_at: string;
}

/** The tenant's saved definitions and version, from the one statement's rows. */
function savedDefinitions(rows: readonly DefinitionRow[]): CatalogueExport {
  const of = (kind: DefinitionRow["kind"]) => rows.filter((row) => row.kind === kind);
  return {
    version: Number(of("v")[0]?.definition ?? 0),
    objects: of("o").map((row) => ({
      object: { ...(JSON.parse(row.definition) as ObjectDef), tracked: row.tracked === true },
      createdAt: Number(row.created_at),
    })),
    fields: of("f").map((row) => ({
      field: JSON.parse(row.definition) as FieldDef,
      createdAt: Number(row.created_at),
    })),
  };
}

export function createCatalogueSession(db: Runner, schemas: SchemaLookup): CatalogueReader & CatalogueWriter {
  const version = async (tenantId: string) =>
    Number((await db.rows<{ version: string }>(SQL.version, [tenantId]))[0]?.version ?? 0);
  const saveField = (tenantId: string, field: FieldDef, createdAt = Date.now()) =>
    uniquely(`${field.objectName} has a field named '${field.name}' already`, () =>
      db.run(SQL.insertField, [
        tenantId,
        field.id,
        field.objectName,
        field.name,
        JSON.stringify(field),
        createdAt,
      ]),
    );
  /** Saves a custom object's definition (its fields are saved apart). */
  const saveObject = (tenantId: string, object: ObjectDef, createdAt: number) => {
    const { fields, tracked, ...definition } = object;
    const json = JSON.stringify({ ...definition, fields: [] });
    return uniquely(`an object named '${object.name}' exists already`, () =>
      db.run(SQL.insertObject, [tenantId, object.id, object.name, object.mapping, json, tracked, createdAt]),
    );
  };
  const definitions = (tenantId: string) =>
    db.rows<DefinitionRow>(SQL.definitions, [tenantId]).then(savedDefinitions);

  return {
    catalogueVersion: version,
    loadCustomDefinitions: async (tenantId) => definitionsOf(await definitions(tenantId)),
    exportCatalogue: definitions,
    ensureObjectStorage: async (tenantId, object) =>
      ensureObjectTable(db, await schemas.schemaOf(tenantId), object),
    async createCustomObject(tenantId, object) {
      await saveObject(tenantId, object, Date.now());
      for (const field of object.fields.filter((f) => f.custom)) await saveField(tenantId, field);
      await ensureObjectTable(db, await schemas.schemaOf(tenantId), object);
    },
    async addCustomField(tenantId, object, field) {
      await saveField(tenantId, field);
      await addColumn(db, await schemas.schemaOf(tenantId), object, field);
    },
    async deleteCustomObject(tenantId, object) {
      await db.run(SQL.deleteObject, [tenantId, object.id]);
      await db.run(SQL.deleteObjectFields, [tenantId, object.name]);
      await dropTable(db, await schemas.schemaOf(tenantId), object);
    },
    async deleteCustomField(tenantId, object, field) {
      await db.run(SQL.deleteField, [tenantId, field.id]);
      await dropColumn(db, await schemas.schemaOf(tenantId), object, field);
    },
    setObjectTracked: async (tenantId, objectId, tracked) =>
      (await db.run(SQL.track, [tracked, tenantId, objectId])) > 0,
    bumpCatalogueVersion: async (tenantId) =>
      Number((await db.rows<{ version: string }>(SQL.bump, [tenantId]))[0]?.version ?? 0),
    async importCatalogue(tenantId, catalogue) {
      for (const { object, createdAt } of catalogue.objects) await saveObject(tenantId, object, createdAt);
      for (const { field, createdAt } of catalogue.fields) await saveField(tenantId, field, createdAt);
      if (catalogue.version > 0) await db.run(SQL.setVersion, [tenantId, catalogue.version]);
    },
  };
}
