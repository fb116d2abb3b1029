/**
 * The record part of a SQLite session: rows of the per-tenant object tables,
 * the change log and sequences. Statements are built from the catalogue
 * (identifiers quoted) with every value bound, and cached by SQLite text.
 */
import type { Database } from "bun:sqlite";
import type { FieldDef, ObjectDef } from "../../model/catalogue.ts";
import type { LoggedChange, RecordValues } from "../../model/record-values.ts";
import { quoteIdent } from "../sql/quote-ident.ts";
import type { StoreWriter } from "../store.ts";
import { tableName } from "./catalogue-ddl.ts";
import { BOUND_COUNT, type ColumnValue, columnList, decodeValue, encodeValue } from "./record-codec.ts";

type RecordMethods = Pick<
  StoreWriter,
  | "findRecords"
  | "findRecordByValue"
  | "countReferencing"
  | "readChanges"
  | "insertRecord"
  | "updateRecord"
  | "deleteRecord"
  | "nextSequenceValue"
  | "appendChanges"
>;

interface ChangeRow {
  position: number;
  tenant_id: string;
  object_name: string;
  operation: LoggedChange["operation"];
  uid: string;
  before: string | null;
  after: string | null;
  mutation_id: string;
  sequence: number;
  committed_at: number;
}

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
  const q = {
    sequence: db.query<{ value: number }, [string, string]>(
      `INSERT INTO sequences (tenant_id, name, value) VALUES (?, ?, 1)
       ON CONFLICT (tenant_id, name) DO UPDATE SET value = value + 1 RETURNING value`,
    ),
    append: db.query(
      `INSERT INTO change_log (tenant_id, object_name, operation, uid, before, after, mutation_id, sequence, committed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    changes: db.query<ChangeRow, [number, number]>(
      `SELECT * FROM change_log WHERE position > ? ORDER BY position LIMIT ${BOUND_COUNT}`,
    ),
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
    async findRecordByValue(tenantId, object, field, value, exceptUid) {
      const sql = `SELECT ${columnList(object.fields)} FROM ${table(tenantId, object)} r
        WHERE ${column(field)} = ? AND uid IS NOT ? LIMIT 1`;
      const [row] = db
        .query<ColumnValue[], ColumnValue[]>(sql)
        .values(encodeValue(field, value), exceptUid ?? null) as ColumnValue[][];
      return row ? decodeColumns(object.fields, row, 0) : null;
    },
    async countReferencing(tenantId, source, field, uid) {
      const sql = `SELECT count(*) AS n FROM ${table(tenantId, source)} WHERE ${column(field)} = ?`;
      return db.query<{ n: number }, [string]>(sql).get(uid)?.n ?? 0;
    },
    async readChanges(afterPosition, limit) {
      return q.changes.all(afterPosition, limit).map((row) => ({
        position: row.position,
        tenantId: row.tenant_id,
        objectName: row.object_name,
        operation: row.operation,
        uid: row.uid,
        before: row.before === null ? null : (JSON.parse(row.before) as RecordValues),
        after: row.after === null ? null : (JSON.parse(row.after) as RecordValues),
        mutationId: row.mutation_id,
        sequence: row.sequence,
        committedAt: row.committed_at,
      }));
    },
    async insertRecord(tenantId, object, values) {
      const columns = object.fields.map(column).join(", ");
      const marks = object.fields.map(() => "?").join(", ");
      const params = object.fields.map((field) => encodeValue(field, values[field.name] ?? null));
      db.query(`INSERT INTO ${table(tenantId, object)} (${columns}) VALUES (${marks})`).run(...params);
    },
    async updateRecord(tenantId, object, uid, values) {
      const fields = object.fields.filter((field) => field.name in values);
      if (fields.length === 0) return;
      const sets = fields.map((field) => `${column(field)} = ?`).join(", ");
      const params = fields.map((field) => encodeValue(field, values[field.name] ?? null));
      db.query(`UPDATE ${table(tenantId, object)} SET ${sets} WHERE uid = ?`).run(...params, uid);
    },
    async deleteRecord(tenantId, object, uid) {
      db.query(`DELETE FROM ${table(tenantId, object)} WHERE uid = ?`).run(uid);
    },
    nextSequenceValue: async (tenantId, name) => q.sequence.get(tenantId, name)?.value ?? 1,
    async appendChanges(entries) {
      for (const entry of entries) {
        q.append.run(
          entry.tenantId,
          entry.objectName,
          entry.operation,
          entry.uid,
          entry.before === null ? null : JSON.stringify(entry.before),
          entry.after === null ? null : JSON.stringify(entry.after),
          entry.mutationId,
          entry.sequence,
          entry.committedAt,
        );
      }
    },
  };
}
