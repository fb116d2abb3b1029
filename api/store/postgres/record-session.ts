/**
 * The record part of a PostgreSQL session: rows of the tables in each
 * tenant's schema, and its sequences (tenant-schemas.ts). Statements are built from the catalogue
 * (identifiers quoted) with every value bound; the client prepares each text
 * once per connection.
 */

import { holdsNul } from "../../../common/store/postgres/pg-errors.ts";
import type { BoundValue, Runner } from "../../../common/store/postgres/runner.ts";
import type { FieldDef, ObjectDef } from "../../model/catalogue.ts";
import type { FieldValue, RecordValues } from "../../model/record-values.ts";
import type { RecordReader, RecordWriter } from "../ports/records-port.ts";
import { quoteIdent } from "../sql/quote-ident.ts";
import { columnType, decodeValue, encodeValue, type PostgresColumnValue } from "./record-codec.ts";
import type { RecordConstraints } from "./record-constraints.ts";
import type { TableGrowth } from "./table-growth.ts";
import { type SchemaLookup, tableRef } from "./tenant-schemas.ts";

type RecordMethods = Pick<
  RecordReader,
  "findRecords" | "findRecordByValue" | "countReferencing" | "exportSequences"
> &
  RecordWriter;

/** A tenant's sequences (tenant-schemas.ts: `seq <name>` in its schema) and the last value each handed out. */
const SEQUENCES = `SELECT substr(sequencename, 5) AS name, last_value AS value FROM pg_sequences
  WHERE schemaname = $1 AND sequencename LIKE 'seq %' AND last_value IS NOT NULL ORDER BY sequencename`;

/**
 * Bound values one imported rows' statement carries at most: well under the protocol's 65,535, so
 * an object with the most fields allowed still writes a few rows a statement.
 */
const IMPORT_PARAMETERS = 20_000;

/** Columns `start`, `start + 1`, … of a row read as an array → record values of `fields`, in that order. */
export function decodeColumns(
  fields: readonly FieldDef[],
  row: readonly unknown[],
  start: number,
): RecordValues {
  const values: RecordValues = {};
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] as FieldDef;
    values[field.name] = decodeValue(field, (row[start + i] ?? null) as PostgresColumnValue);
  }
  return values;
}

const columnLists = new WeakMap<readonly FieldDef[], string>();

/** `r."uid", r."name", …` for the fields read by a query over alias `r`; built once per field list. */
function columnList(fields: readonly FieldDef[]): string {
  let list = columnLists.get(fields);
  if (list === undefined) {
    list = fields.map((field) => `r.${quoteIdent(field.mapping)}`).join(", ");
    columnLists.set(fields, list);
  }
  return list;
}

const column = (field: FieldDef) => quoteIdent(field.mapping);
/**
 * Placeholder `n` cast to the field's column type: a reference's value is used twice (written, and
 * looked up by the guard), and the server must settle one type for it.
 */
const typed = (n: number, field: FieldDef) => `$${n}::${columnType(field)}`;

/** `growth` hears of the rows written (counted when written: a unit rolled back only analyzes early). */
export function createRecordSession(
  db: Runner,
  schemas: SchemaLookup,
  constraints: RecordConstraints,
  growth?: TableGrowth,
): RecordMethods {
  const table = async (tenantId: string, object: ObjectDef) =>
    tableRef(await schemas.schemaOf(tenantId), object);
  async function findRecordByValue(
    tenantId: string,
    object: ObjectDef,
    field: FieldDef,
    value: FieldValue,
    exceptUid?: string,
  ): Promise<RecordValues | null> {
    // No stored text holds U+0000 (the server refuses it): nothing to find, and the write that
    // follows is refused naming the field (a failed read would name none, and abort the transaction).
    if (holdsNul(value)) return null;
    const sql = `SELECT ${columnList(object.fields)} FROM ${await table(tenantId, object)} r
      WHERE r.${column(field)} = $1 AND r.uid IS DISTINCT FROM $2 LIMIT 1`;
    const [row] = await db.values(sql, [encodeValue(field, value), exceptUid ?? null]);
    return row ? decodeColumns(object.fields, row, 0) : null;
  }
  /**
   * Inserts `values` as a record of `object`; with `key`, nothing when another record holds its
   * value of `key`, by the key's unique index (ON CONFLICT: the key is not read, so no predicate
   * lock on its page). Null once written, else the record holding the key.
   */
  async function insert(
    tenantId: string,
    object: ObjectDef,
    values: RecordValues,
    key?: FieldDef,
  ): Promise<RecordValues | null> {
    const schema = await schemas.schemaOf(tenantId);
    const at = (field: FieldDef) => typed(object.fields.indexOf(field) + 1, field);
    const uid = at(object.fields.find((field) => field.type === "id") as FieldDef);
    const guard = await constraints.referenceGuard(tenantId, schema, object, object.fields, at, uid);
    const orNothing = key ? ` ON CONFLICT (${column(key)}) DO NOTHING` : "";
    const target = tableRef(schema, object);
    const sql = `INSERT INTO ${target} (${object.fields.map(column).join(", ")})
      SELECT ${object.fields.map(at).join(", ")} WHERE ${guard}${orNothing}`;
    const params = object.fields.map((field) => encodeValue(field, values[field.name] ?? null));
    try {
      if ((await db.run(sql, params)) > 0) {
        growth?.grew(target, 1);
        return null;
      }
    } catch (error) {
      throw constraints.explainFailure(error, object, values);
    }
    // Nothing written: the key taken, or a reference that names nothing (thrown here).
    const holder = key ? await findRecordByValue(tenantId, object, key, values[key.name] ?? null) : null;
    if (holder) return holder;
    await constraints.assertReferences(tenantId, schema, object, values, values.UID as string);
    throw new Error(`${object.name}: the record was not written, for no reason found`);
  }

  return {
    async findRecords(tenantId, object, uids, fields = object.fields) {
      // A UID holding U+0000 names no record (the server stores no such text, and would refuse the read).
      const named = uids.filter((uid) => !holdsNul(uid));
      if (named.length === 0) return [];
      const sql = `SELECT ${columnList(fields)} FROM ${await table(tenantId, object)} r WHERE r.uid = ANY($1::text[])`;
      return (await db.values(sql, [named])).map((row) => decodeColumns(fields, row, 0));
    },
    findRecordByValue,
    async countReferencing(tenantId, source, field, uid) {
      const sql = `SELECT count(*) AS n FROM ${await table(tenantId, source)} WHERE ${column(field)} = $1`;
      return Number((await db.rows<{ n: string }>(sql, [uid]))[0]?.n ?? 0);
    },
    async insertRecord(tenantId, object, values) {
      await insert(tenantId, object, values);
    },
    insertUnlessTaken: insert,
    async updateRecord(tenantId, object, uid, values) {
      const fields = object.fields.filter((field) => field.name in values);
      if (fields.length === 0) return;
      const schema = await schemas.schemaOf(tenantId);
      const at = (field: FieldDef) => typed(fields.indexOf(field) + 1, field);
      const self = `$${fields.length + 1}::text`;
      const guard = await constraints.referenceGuard(tenantId, schema, object, fields, at, self);
      const sets = fields.map((field) => `${column(field)} = ${at(field)}`).join(", ");
      const sql = `UPDATE ${tableRef(schema, object)} SET ${sets} WHERE uid = ${self} AND ${guard}`;
      const params = fields.map((field) => encodeValue(field, values[field.name] ?? null));
      try {
        if ((await db.run(sql, [...params, uid])) > 0) return;
      } catch (error) {
        throw constraints.explainFailure(error, object, values);
      }
      // No row written: a reference that names nothing (thrown here), or no record `uid` (nothing to set).
      await constraints.assertReferences(tenantId, schema, object, values, uid);
    },
    async deleteRecord(tenantId, object, uid) {
      await db.run(`DELETE FROM ${await table(tenantId, object)} WHERE uid = $1`, [uid]);
    },
    async nextSequenceValue(tenantId, name) {
      const sequence = await schemas.sequenceOf(tenantId, name);
      return Number((await db.rows<{ value: string }>("SELECT nextval($1) AS value", [sequence]))[0]?.value);
    },
    exportSequences: async (tenantId) =>
      (await db.rows<{ name: string; value: string }>(SEQUENCES, [await schemas.schemaOf(tenantId)])).map(
        (row) => ({ name: row.name, value: Number(row.value) }),
      ),
    async importRecords(tenantId, object, records) {
      const target = await table(tenantId, object);
      const width = object.fields.length;
      const perStatement = Math.max(1, Math.floor(IMPORT_PARAMETERS / width));
      for (let start = 0; start < records.length; start += perStatement) {
        const chunk = records.slice(start, start + perStatement);
        const rows = chunk.map(
          (_, row) => `(${object.fields.map((field, i) => typed(row * width + i + 1, field)).join(", ")})`,
        );
        const params = chunk.flatMap((values) =>
          object.fields.map((field) => encodeValue(field, values[field.name] ?? null)),
        );
        const sql = `INSERT INTO ${target} (${object.fields.map(column).join(", ")}) VALUES ${rows.join(", ")}`;
        try {
          await db.run(sql, params as BoundValue[]);
          growth?.grew(target, chunk.length);
        } catch (error) {
          // The page's record the server refused, when one can be told (a unique clash, text with NUL).
          const culprit = chunk.find((values) => constraints.explainFailure(error, object, values) !== error);
          throw constraints.explainFailure(error, object, culprit ?? {});
        }
      }
    },
    async importSequences(tenantId, sequences) {
      // setval is not undone by a rollback, but a sequence made in the unit of work is dropped with it.
      for (const { name, value } of sequences)
        await db.run("SELECT setval($1, $2, true)", [await schemas.sequenceOf(tenantId, name), value]);
    },
  };
}
