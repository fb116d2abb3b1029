/**
 * Record storage of a tenant's objects: one table per object named
 * `t<tenant storage no>_<object mapping>`, one column per field named by its
 * mapping, a unique index per unique field, an index per reference. Runs inside the caller's
 * transaction (SQLite DDL is transactional), so a failed definition leaves nothing; and, as the
 * port asks of every engine, each change is idempotent (what exists is not created again, what is
 * gone is not dropped again).
 */
import type { Database } from "bun:sqlite";
import type { FieldDef, ObjectDef } from "../../model/catalogue.ts";
import { defaultRecordValue } from "../../model/field-values.ts";
import { quoteIdent } from "../sql/quote-ident.ts";
import { columnType, createTableSql, encodeValue, indexName } from "./record-codec.ts";

export const tableName = (storageNo: number, object: Pick<ObjectDef, "mapping">) =>
  `t${storageNo}_${object.mapping}`;

/** Unique fields get a unique index; references a plain one (reverse lists and delete checks look them up). */
function createFieldIndex(db: Database, table: string, field: FieldDef): void {
  if (field.type === "id" || (!field.unique && field.type !== "reference")) return;
  const unique = field.unique ? "UNIQUE " : "";
  const index = quoteIdent(indexName(table, field));
  db.run(
    `CREATE ${unique}INDEX IF NOT EXISTS ${index} ON ${quoteIdent(table)} (${quoteIdent(field.mapping)})`,
  );
}

function existingColumns(db: Database, table: string): Set<string> {
  return new Set(
    db
      .query<{ name: string }, []>(`SELECT name FROM pragma_table_info(${sqlString(table)})`)
      .all()
      .map((c) => c.name),
  );
}

const sqlString = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** Creates the object's table (and indexes) when absent; adds the columns it lacks when present. */
export function ensureObjectTable(db: Database, storageNo: number, object: ObjectDef): void {
  const table = tableName(storageNo, object);
  const columns = existingColumns(db, table);
  if (columns.size === 0) db.run(createTableSql(table, object));
  for (const field of object.fields) {
    if (columns.size > 0 && !columns.has(field.mapping)) addNewColumn(db, table, field);
    createFieldIndex(db, table, field);
  }
}

/** Adds a field's column (and index) unless the table has it; existing rows get the field's default. */
export function addColumn(db: Database, table: string, field: FieldDef): void {
  if (existingColumns(db, table).has(field.mapping)) createFieldIndex(db, table, field);
  else addNewColumn(db, table, field);
}

function addNewColumn(db: Database, table: string, field: FieldDef): void {
  db.run(`ALTER TABLE ${quoteIdent(table)} ADD COLUMN ${quoteIdent(field.mapping)} ${columnType(field)}`);
  if (field.defaultValue !== null) {
    const value = encodeValue(field, defaultRecordValue(field));
    db.query(`UPDATE ${quoteIdent(table)} SET ${quoteIdent(field.mapping)} = ?`).run(value);
  }
  createFieldIndex(db, table, field);
}

/** Drops a field's column (and index) if the table has it. */
export function dropColumn(db: Database, table: string, field: FieldDef): void {
  db.run(`DROP INDEX IF EXISTS ${quoteIdent(indexName(table, field))}`);
  if (!existingColumns(db, table).has(field.mapping)) return;
  db.run(`ALTER TABLE ${quoteIdent(table)} DROP COLUMN ${quoteIdent(field.mapping)}`);
}

export function dropTable(db: Database, table: string): void {
  db.run(`DROP TABLE IF EXISTS ${quoteIdent(table)}`);
}
