/**
 * What the port promises of every record write, kept for the PostgreSQL
 * engine. A reference names an existing record of its target: record tables
 * carry no FOREIGN KEY (custom fields and objects come and go, and deletes
 * leave what refers to them to the caller), so each write carries the check
 * in its own statement (`referenceGuard`: a write that would dangle writes no
 * row) and only then looks for which reference failed. Under SERIALIZABLE the
 * check holds against a concurrent delete of the target. A unique clash is a
 * UniqueViolationError naming the field: the violated index's name (a field
 * the server reports, not its message) is matched against the names the
 * engine gave (catalogue-ddl.ts).
 */
import {
  LimitExceededError,
  ReferenceNotFoundError,
  UniqueViolationError,
  ValidationError,
} from "../../../common/errors.ts";
import {
  holdsNul,
  isNulInText,
  isProgramLimit,
  NUL_IN_TEXT,
  violatedUnique,
} from "../../../common/store/postgres/pg-errors.ts";
import type { BoundValue, Runner } from "../../../common/store/postgres/runner.ts";
import type { FieldDef, ObjectDef } from "../../model/catalogue.ts";
import type { RecordValues } from "../../model/record-values.ts";
import { STANDARD_OBJECTS } from "../../model/standard-objects.ts";
import { indexName } from "./catalogue-ddl.ts";
import { tableRef } from "./tenant-schemas.ts";

const STANDARD_MAPPINGS = new Map(STANDARD_OBJECTS.map((object) => [object.name, object.mapping]));
const CUSTOM_MAPPING = "SELECT mapping FROM custom_objects WHERE tenant_id = $1 AND name = $2";

export interface RecordConstraints {
  /**
   * The condition a write of `object`'s record must meet: each reference field among `fields` is
   * null, names the record itself (`selfUid`, a placeholder, when the field refers to `object`),
   * or names a record of its target. `placeholder(field)` is the field's value in the statement.
   */
  referenceGuard(
    tenantId: string,
    schema: string,
    object: ObjectDef,
    fields: readonly FieldDef[],
    placeholder: (field: FieldDef) => string,
    selfUid: string,
  ): Promise<string>;
  /** @throws ReferenceNotFoundError for the first reference among `values` that names no record. */
  assertReferences(
    tenantId: string,
    schema: string,
    object: ObjectDef,
    values: RecordValues,
    selfUid: string,
  ): Promise<void>;
  /**
   * The error to throw for a failed write of `values`: a UniqueViolationError or ValidationError naming
   * the field, a LimitExceededError for a row the server cannot hold, else `error`.
   */
  explainFailure(error: unknown, object: ObjectDef, values: RecordValues): unknown;
}

const isReference = (field: FieldDef) => field.type === "reference" && field.referenceTo !== null;

/** The constraints of one unit of work (custom objects' tables are looked up once per unit). */
export function createRecordConstraints(db: Runner): RecordConstraints {
  const mappings = new Map<string, string | null>();
  /** The target's table, or null when the tenant has no such object (then only null refers to it). */
  const targetTable = async (tenantId: string, schema: string, objectName: string) => {
    const key = `${tenantId}\u0000${objectName}`;
    let mapping = STANDARD_MAPPINGS.get(objectName) ?? mappings.get(key);
    if (mapping === undefined) {
      const [row] = await db.rows<{ mapping: string }>(CUSTOM_MAPPING, [tenantId, objectName]);
      mapping = row?.mapping ?? null;
      mappings.set(key, mapping);
    }
    return mapping === null ? null : tableRef(schema, { mapping });
  };

  return {
    async referenceGuard(tenantId, schema, object, fields, placeholder, selfUid) {
      const conditions: string[] = [];
      for (const field of fields.filter(isReference)) {
        const value = placeholder(field);
        const table = await targetTable(tenantId, schema, field.referenceTo as string);
        const self = field.referenceTo === object.name ? ` OR ${value} = ${selfUid}` : "";
        const found = table === null ? "" : ` OR EXISTS (SELECT 1 FROM ${table} WHERE uid = ${value})`;
        conditions.push(`(${value} IS NULL${self}${found})`);
      }
      return conditions.length === 0 ? "TRUE" : conditions.join(" AND ");
    },
    async assertReferences(tenantId, schema, object, values, selfUid) {
      for (const field of object.fields.filter(isReference)) {
        const value = values[field.name] ?? null;
        if (value === null || (field.referenceTo === object.name && value === selfUid)) continue;
        const table = await targetTable(tenantId, schema, field.referenceTo as string);
        const found =
          table !== null &&
          (await db.rows(`SELECT 1 FROM ${table} WHERE uid = $1`, [value as BoundValue])).length > 0;
        if (found) continue;
        const message = `no ${field.referenceTo} record with UID '${String(value)}'`;
        throw new ReferenceNotFoundError(`${object.name}.${field.name}: ${message}`, [
          { path: field.name, message },
        ]);
      }
    },
    explainFailure(error, object, values) {
      if (isNulInText(error) || error instanceof ValidationError) return explainNul(object, values, error);
      if (isProgramLimit(error)) return rowTooBig(object);
      const constraint = violatedUnique(error);
      if (constraint === null) return error;
      const field = object.fields.find(
        (f) => (f.unique || f.type === "id") && indexName(object, f) === constraint,
      );
      if (!field) return new UniqueViolationError(`${object.name}: a unique value is another record's`);
      const value = JSON.stringify(values[field.name] ?? null);
      return new UniqueViolationError(
        `${object.name}.${field.name} must be unique: another record has ${value}`,
      );
    },
  };
}

/**
 * A record PostgreSQL cannot hold in one row: at most about 8 KB once long values are moved out, each
 * leaving an 18-byte pointer behind, so some 450 long text values at most (the catalogue allows 500
 * fields). Only an object this wide meets it; the statement wrote nothing.
 */
const rowTooBig = (object: ObjectDef) =>
  new LimitExceededError(
    `${object.name}: the record is too big for PostgreSQL, which stores at most about 8 KB per row after moving long values out of it (each still takes 18 bytes there); nothing was written`,
  );

/** A ValidationError naming each field whose text holds U+0000, which PostgreSQL's text cannot store. */
function explainNul(object: ObjectDef, values: RecordValues, error: unknown): unknown {
  const fields = object.fields.filter((field) => holdsNul(values[field.name]));
  if (fields.length === 0) return error;
  return new ValidationError(
    `${object.name}: ${NUL_IN_TEXT}`,
    fields.map((field) => ({ path: field.name, message: NUL_IN_TEXT })),
  );
}
