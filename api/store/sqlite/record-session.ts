/**
 * The record part of a SQLite session: rows of the per-tenant object tables
 * and sequences. Statements are built from the catalogue
 * (identifiers quoted) with every value bound, and cached by SQLite text.
 */
import type { Database } from "bun:sqlite";
import type { FieldDef, ObjectDef } from "../../model/catalogue.ts";
import type { RecordValues } from "../../model/record-values.ts";
import { insertLookingUpFirst } from "../insert-looking-up-first.ts";
import type { RecordReader, RecordWriter } from "../ports/records-port.ts";
import { quoteIdent } from "../sql/quote-ident.ts";
import { tableName } from "./catalogue-ddl.ts";
import { type ColumnValue, columnList, decodeValue, encodeValue } from "./record-codec.ts";
import { createRecordConstraints } from "./record-constraints.ts";

type RecordMethods = Pick<
  RecordReader,
  "findRecords" | "findRecordByValue" | "countReferencing" | "exportSequences"
> &
  RecordWriter;

/** Columns `start`, `start + 1`, … of a row read as an array → record values of `fields`, in that order. */
export function decodeColumns(
  fields: readonly FieldDef[],
  row: readonly ColumnValue[],
  start: number,
): RecordValues {
  const values: RecordValues = {};
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] as FieldDef;
    values[field.name] = decodeValue(field, row[start + i] ?? null);
  }
  return values;
}

export function createRecordSession(db: Database, storageNo: (tenantId: string) => number): RecordMethods {
  const table = (tenantId: string, object: ObjectDef) => quoteIdent(tableName(storageNo(tenantId), object));
  const column = (field: FieldDef) => quoteIdent(field.mapping);
  const constraints = createRecordConstraints(db, storageNo);
  const q = {
    sequence: db.query<{ value: number }, [string, string]>(
      `INSERT INTO sequences (tenant_id, name, value) VALUES (?, ?, 1)
       ON CONFLICT (tenant_id, name) DO UPDATE SET value = value + 1 RETURNING value`,
    ),
    sequences: db.query<{ name: string; value: number }, [string]>(
      "SELECT name, value FROM sequences WHERE tenant_id = ? ORDER BY name",
    ),
    setSequence: db.query(
      `INSERT INTO sequences (tenant_id, name, value) VALUES (?, ?, ?)
       ON CONFLICT (tenant_id, name) DO UPDATE SET value = excluded.value`,
    ),
  };

  const findRecordByValue: RecordMethods["findRecordByValue"] = async (
    tenantId,
    object,
    field,
    value,
    exceptUid,
  ) => {
    const sql = `SELECT ${columnList(object.fields)} FROM ${table(tenantId, object)} r
      WHERE ${column(field)} = ? AND uid IS NOT ? LIMIT 1`;
    const [row] = db
      .query<ColumnValue[], ColumnValue[]>(sql)
      .values(encodeValue(field, value), exceptUid ?? null) as ColumnValue[][];
    return row ? decodeColumns(object.fields, row, 0) : null;
  };
  const insertOne = async (tenantId: string, object: ObjectDef, values: RecordValues) => {
    constraints.assertReferences(tenantId, object, values, values.UID as string);
    const columns = object.fields.map(column).join(", ");
    const marks = object.fields.map(() => "?").join(", ");
    const params = object.fields.map((field) => encodeValue(field, values[field.name] ?? null));
    try {
      db.query(`INSERT INTO ${table(tenantId, object)} (${columns}) VALUES (${marks})`).run(...params);
    } catch (error) {
      throw constraints.explainFailure(error, tenantId, object, values, null);
    }
  };

  return {
    async findRecords(tenantId, object, uids, fields = object.fields) {
      if (uids.length === 0) return [];
      const marks = uids.map(() => "?").join(", ");
      const rows = db.query<ColumnValue[], string[]>(
        `SELECT ${columnList(fields)} FROM ${table(tenantId, object)} r WHERE uid IN (${marks})`,
      );
      return (rows.values(...uids) as ColumnValue[][]).map((row) => decodeColumns(fields, row, 0));
    },
    findRecordByValue,
    async countReferencing(tenantId, source, field, uid) {
      const sql = `SELECT count(*) AS n FROM ${table(tenantId, source)} WHERE ${column(field)} = ?`;
      return db.query<{ n: number }, [string]>(sql).get(uid)?.n ?? 0;
    },
    insertRecord: insertOne,
    insertUnlessTaken: insertLookingUpFirst(findRecordByValue, insertOne),
    async updateRecord(tenantId, object, uid, values) {
      const fields = object.fields.filter((field) => field.name in values);
      if (fields.length === 0) return;
      constraints.assertReferences(tenantId, object, values, uid);
      const sets = fields.map((field) => `${column(field)} = ?`).join(", ");
      const params = fields.map((field) => encodeValue(field, values[field.name] ?? null));
      try {
        db.query(`UPDATE ${table(tenantId, object)} SET ${sets} WHERE uid = ?`).run(...params, uid);
      } catch (error) {
        throw constraints.explainFailure(error, tenantId, object, values, uid);
      }
    },
    async deleteRecord(tenantId, object, uid) {
      db.query(`DELETE FROM ${table(tenantId, object)} WHERE uid = ?`).run(uid);
    },
    nextSequenceValue: async (tenantId, name) => q.sequence.get(tenantId, name)?.value ?? 1,
    exportSequences: async (tenantId) => q.sequences.all(tenantId),
    async importRecords(tenantId, object, records) {
      const columns = object.fields.map(column).join(", ");
      const marks = object.fields.map(() => "?").join(", ");
      const insert = db.query(`INSERT INTO ${table(tenantId, object)} (${columns}) VALUES (${marks})`);
      for (const values of records) {
        try {
          insert.run(...object.fields.map((field) => encodeValue(field, values[field.name] ?? null)));
        } catch (error) {
          throw constraints.explainFailure(error, tenantId, object, values, null);
        }
      }
    },
    async importSequences(tenantId, sequences) {
      for (const { name, value } of sequences) q.setSequence.run(tenantId, name, value);
    },
  };
}
