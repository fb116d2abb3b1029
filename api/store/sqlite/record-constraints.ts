/**
 * What the port promises of every record write, kept here for the SQLite
 * engine: a reference names an existing record of its target (record tables
 * carry no FOREIGN KEY: SQLite cannot drop a column one names, and custom
 * fields come and go), and a unique value clash is a UniqueViolationError
 * naming the field (the UNIQUE index refuses it; which field clashed is
 * looked up, not read from SQLite's message).
 */
import type { Database } from "bun:sqlite";
import { ReferenceNotFoundError, UniqueViolationError } from "../../../common/errors.ts";
import type { FieldDef, ObjectDef } from "../../model/catalogue.ts";
import type { RecordValues } from "../../model/record-values.ts";
import { STANDARD_OBJECTS } from "../../model/standard-objects.ts";
import { quoteIdent } from "../sql/quote-ident.ts";
import { tableName } from "./catalogue-ddl.ts";
import { isUniqueFailure } from "./constraint-errors.ts";
import { encodeValue } from "./record-codec.ts";

const STANDARD_MAPPINGS = new Map(STANDARD_OBJECTS.map((object) => [object.name, object.mapping]));

export interface RecordConstraints {
  /**
   * @throws ReferenceNotFoundError when a reference among `values` names no record of its target
   * (a record of `object` may name itself: `selfUid`).
   */
  assertReferences(tenantId: string, object: ObjectDef, values: RecordValues, selfUid: string): void;
  /**
   * The error to throw for a failed write of `values` to `object`: a UniqueViolationError naming
   * the field whose value another record (other than `selfUid`) has, or `error` itself when it is
   * not a unique-constraint failure.
   */
  explainFailure(
    error: unknown,
    tenantId: string,
    object: ObjectDef,
    values: RecordValues,
    selfUid: string | null,
  ): unknown;
}

export function createRecordConstraints(
  db: Database,
  storageNo: (tenantId: string) => number,
): RecordConstraints {
  const customMapping = db.query<{ mapping: string | null }, [string, string]>(
    "SELECT json_extract(definition, '$.mapping') AS mapping FROM custom_objects WHERE tenant_id = ? AND name = ?",
  );
  const targetTable = (tenantId: string, objectName: string): string | null => {
    const mapping = STANDARD_MAPPINGS.get(objectName) ?? customMapping.get(tenantId, objectName)?.mapping;
    return mapping ? quoteIdent(tableName(storageNo(tenantId), { mapping })) : null;
  };
  const exists = (table: string, uid: string) =>
    db.query<{ found: number }, [string]>(`SELECT 1 AS found FROM ${table} WHERE uid = ?`).get(uid) !== null;
  const holds = (tenantId: string, object: ObjectDef, field: FieldDef, value: unknown, selfUid: string) => {
    if (field.referenceTo === object.name && value === selfUid) return true;
    const table = targetTable(tenantId, field.referenceTo as string);
    return table !== null && exists(table, value as string);
  };

  return {
    assertReferences(tenantId, object, values, selfUid) {
      for (const field of object.fields) {
        if (field.type !== "reference" || field.referenceTo === null) continue;
        const value = values[field.name] ?? null;
        if (value === null || holds(tenantId, object, field, value, selfUid)) continue;
        const message = `no ${field.referenceTo} record with UID '${String(value)}'`;
        throw new ReferenceNotFoundError(`${object.name}.${field.name}: ${message}`, [
          { path: field.name, message },
        ]);
      }
    },
    explainFailure(error, tenantId, object, values, selfUid) {
      if (!isUniqueFailure(error)) return error;
      const table = quoteIdent(tableName(storageNo(tenantId), object));
      for (const field of object.fields) {
        const value = values[field.name] ?? null;
        if (!(field.unique || field.type === "id") || value === null) continue;
        const clash = db
          .query<{ found: number }, [string | number | null, string | null]>(
            `SELECT 1 AS found FROM ${table} WHERE ${quoteIdent(field.mapping)} = ? AND uid IS NOT ?`,
          )
          .get(encodeValue(field, value), selfUid);
        if (clash)
          return new UniqueViolationError(
            `${object.name}.${field.name} must be unique: another record has ${JSON.stringify(value)}`,
          );
      }
      return new UniqueViolationError(`${object.name}: a unique value is another record's`);
    },
  };
}
