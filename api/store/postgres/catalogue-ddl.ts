/**
 * Record storage of a tenant's objects: a table per object in the tenant's
 * schema, named by the object's mapping, a column per field (types:
 * record-codec.ts), `uid` the primary key, a unique index per unique field, an
 * index per reference. Runs inside the caller's unit of work (PostgreSQL's DDL
 * is transactional, so a failed definition leaves nothing); and, as the port
 * asks of every engine, each change is idempotent: what exists is not created
 * again, what is gone is not dropped again.
 */
import { createHash } from "node:crypto";
import type { Runner } from "../../../common/store/postgres/runner.ts";
import { sqlLiteral } from "../../../common/store/postgres/sql-literal.ts";
import type { FieldDef, ObjectDef } from "../../model/catalogue.ts";
import { defaultRecordValue } from "../../model/field-values.ts";
import { quoteIdent } from "../sql/quote-ident.ts";
import { columnType, encodeValue, type PostgresColumnValue } from "./record-codec.ts";
import { tableRef } from "./tenant-schemas.ts";

/** PostgreSQL cuts longer identifiers short; a name past it is shortened here, the same way every time. */
const MAX_IDENTIFIER_BYTES = 63;

/**
 * The name of a field's index in its table's schema: UID's is the primary key, other unique fields
 * get a unique one, references a plain one (reverse lists and delete checks look them up). A unique
 * violation names it, which is how the engine tells which field clashed.
 */
export function indexName(object: Pick<ObjectDef, "mapping">, field: FieldDef): string {
  const name = `${object.mapping}__${field.mapping}__${field.unique ? "unique" : "idx"}`;
  if (Buffer.byteLength(name) <= MAX_IDENTIFIER_BYTES) return name;
  const digest = createHash("sha256").update(name).digest("hex").slice(0, 16);
  return `${name.slice(0, 40)}__${digest}`;
}

const hasIndex = (field: FieldDef) => field.type !== "id" && (field.unique || field.type === "reference");

/**
 * Builds a field's index, free of the store's statement_timeout (postgres-engine.ts) for that one
 * statement: on a table already holding many rows (a unique or reference field added to a big
 * object) the build reads them all, which may rightly take longer than any request's statement,
 * and cutting it would make the field impossible to add. Administrators alone change a catalogue,
 * one change at a time per tenant. The limit comes back for the rest of the unit of work.
 */
async function createFieldIndex(db: Runner, schema: string, object: ObjectDef, field: FieldDef) {
  if (!hasIndex(field)) return;
  const unique = field.unique ? "UNIQUE " : "";
  await db.run("SET LOCAL statement_timeout = 0");
  await db.run(
    `CREATE ${unique}INDEX IF NOT EXISTS ${quoteIdent(indexName(object, field))}
     ON ${tableRef(schema, object)} (${quoteIdent(field.mapping)})`,
  );
  await db.run("SET LOCAL statement_timeout TO DEFAULT");
}

async function existingColumns(db: Runner, schema: string, object: ObjectDef): Promise<Set<string>> {
  const rows = await db.rows<{ name: string }>(
    `SELECT attname AS name FROM pg_attribute
     WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`,
    [tableRef(schema, object)],
  );
  return new Set(rows.map((row) => row.name));
}

/** Creates the object's table (and indexes) when absent; adds the columns it lacks when present. */
export async function ensureObjectTable(db: Runner, schema: string, object: ObjectDef): Promise<void> {
  const columns = await existingColumns(db, schema, object);
  if (columns.size === 0) {
    const definitions = object.fields.map(
      (field) => `${quoteIdent(field.mapping)} ${columnType(field)}${field.type === "id" ? " NOT NULL" : ""}`,
    );
    // The primary key named as the unique indexes are, so a clash on it names the UID field too.
    const uid = object.fields.find((field) => field.type === "id");
    if (uid)
      definitions.push(
        `CONSTRAINT ${quoteIdent(indexName(object, uid))} PRIMARY KEY (${quoteIdent(uid.mapping)})`,
      );
    await db.run(`CREATE TABLE IF NOT EXISTS ${tableRef(schema, object)} (${definitions.join(", ")})`);
  }
  for (const field of object.fields) {
    if (columns.size > 0 && !columns.has(field.mapping)) await addNewColumn(db, schema, object, field);
    else await createFieldIndex(db, schema, object, field);
  }
}

/** Adds a field's column (and index) unless the table has it; existing rows get the field's default. */
export async function addColumn(db: Runner, schema: string, object: ObjectDef, field: FieldDef) {
  if ((await existingColumns(db, schema, object)).has(field.mapping))
    await createFieldIndex(db, schema, object, field);
  else await addNewColumn(db, schema, object, field);
}

/**
 * A constant DEFAULT is how the existing rows get the field's default: PostgreSQL (11 and later)
 * keeps it in the catalog for the rows stored without the column, so adding the column rewrites no
 * row (an UPDATE would write a new version of every row, and WAL for each). The DEFAULT is dropped
 * at once, which leaves the existing rows their value: the column then holds NULL unless written,
 * as in a table created whole.
 */
async function addNewColumn(db: Runner, schema: string, object: ObjectDef, field: FieldDef) {
  const table = tableRef(schema, object);
  const column = quoteIdent(field.mapping);
  if (field.defaultValue === null) {
    await db.run(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${column} ${columnType(field)}`);
  } else {
    const value = columnLiteral(encodeValue(field, defaultRecordValue(field)));
    await db.run(
      `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${column} ${columnType(field)} DEFAULT ${value}`,
    );
    await db.run(`ALTER TABLE ${table} ALTER COLUMN ${column} DROP DEFAULT`);
  }
  await createFieldIndex(db, schema, object, field);
}

/** A column value as SQL text (a DEFAULT takes no bound parameter); a multipicklist's as a text array. */
function columnLiteral(value: PostgresColumnValue): string {
  return Array.isArray(value) ? `ARRAY[${value.map(sqlLiteral).join(", ")}]::text[]` : sqlLiteral(value);
}

/** Drops a field's column (and its index) if the table has it. */
export async function dropColumn(db: Runner, schema: string, object: ObjectDef, field: FieldDef) {
  await db.run(`DROP INDEX IF EXISTS ${quoteIdent(schema)}.${quoteIdent(indexName(object, field))}`);
  await db.run(
    `ALTER TABLE IF EXISTS ${tableRef(schema, object)} DROP COLUMN IF EXISTS ${quoteIdent(field.mapping)}`,
  );
}

export async function dropTable(db: Runner, schema: string, object: ObjectDef) {
  await db.run(`DROP TABLE IF EXISTS ${tableRef(schema, object)}`);
}
