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
import { type ColumnValue, columnType, createTableSql, encodeValue, indexName } from "./record-codec.ts";

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

/**
 * The column's DEFAULT is how the existing rows get the field's default: SQLite keeps it in the
 * schema and reads it for every row stored without the column, so adding the column writes no row.
 * (An UPDATE would rewrite every row whole, its other values too, holding the one writer, and with
 * it the event loop, for as long as the table takes to copy.) It never reaches a record written
 * later: every insert names every column.
 */
function addNewColumn(db: Database, table: string, field: FieldDef): void {
  const fill =
    field.defaultValue === null
      ? ""
      : ` DEFAULT ${sqlLiteral(encodeValue(field, defaultRecordValue(field)))}`;
  db.run(
    `ALTER TABLE ${quoteIdent(table)} ADD COLUMN ${quoteIdent(field.mapping)} ${columnType(field)}${fill}`,
  );
  createFieldIndex(db, table, field);
}

/**
 * A column value as an SQL literal (a DEFAULT takes no bound parameter).
 * @throws Error for text holding U+0000, which ends an SQLite literal (definitions refuse such defaults).
 */
function sqlLiteral(value: ColumnValue): string {
  if (value === null) return "NULL";
  if (typeof value === "number") return String(value);
  if (value.includes("\u0000")) throw new Error("a column default cannot hold U+0000");
  return sqlString(value);
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
