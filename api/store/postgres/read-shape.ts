/**
 * How a list reads its records: the fields' columns over alias `r`, then the
 * columns of each to-one lookup joined (`l<i>`), and how a row read as an
 * array becomes record values carrying what the lookups found (LOOKUPS).
 * Built once per field list, lookup list and tenant schema.
 */
import type { FieldDef } from "../../model/catalogue.ts";
import type { RecordValues } from "../../model/record-values.ts";
import { type JoinedLookup, LOOKUPS, type WithLookups } from "../ports/records-port.ts";
import { quoteIdent } from "../sql/quote-ident.ts";
import { decodeColumns } from "./record-session.ts";
import { tableRef } from "./tenant-schemas.ts";

/** The alias of the listed object's table. */
export const BASE = "r";

export interface ReadShape {
  /** The select list: the fields' columns, then the joined lookups' (`l<i>.<mapping>`). */
  columns: string;
  /** The same, one column each. */
  selected: readonly string[];
  /** Where each of the fields' columns (`r."<mapping>"`) is in a row. */
  columnAt: ReadonlyMap<string, number>;
  /** The LEFT JOINs of the lookups. */
  joins: string;
  /** How many columns `columns` selects. */
  width: number;
  /** A row → record values, carrying what its lookups found (see LOOKUPS). */
  decode: (row: readonly unknown[]) => RecordValues;
}

const NO_LOOKUPS: readonly JoinedLookup[] = [];
const shapes = new WeakMap<readonly FieldDef[], WeakMap<readonly JoinedLookup[], Map<string, ReadShape>>>();

export function readShape(
  fields: readonly FieldDef[],
  lookups: readonly JoinedLookup[] = NO_LOOKUPS,
  schema: string,
): ReadShape {
  const byLookups = shapes.get(fields) ?? new WeakMap<readonly JoinedLookup[], Map<string, ReadShape>>();
  shapes.set(fields, byLookups);
  const bySchema = byLookups.get(lookups) ?? new Map<string, ReadShape>();
  byLookups.set(lookups, bySchema);
  let shape = bySchema.get(schema);
  if (!shape) {
    shape = buildShape(fields, lookups, schema);
    bySchema.set(schema, shape);
  }
  return shape;
}

function buildShape(
  fields: readonly FieldDef[],
  lookups: readonly JoinedLookup[],
  schema: string,
): ReadShape {
  // Each lookup's columns follow the record's; its UID column tells whether it found a record.
  const starts: number[] = [];
  let width = fields.length;
  for (const lookup of lookups) {
    starts.push(width);
    width += lookup.fields.length;
  }
  const uidAt = lookups.map(
    (lookup, i) => (starts[i] as number) + lookup.fields.findIndex((field) => field.type === "id"),
  );
  const looked = lookups.flatMap(({ fields: read }, i) =>
    read.map((field) => `l${i}.${quoteIdent(field.mapping)}`),
  );
  const joins = lookups.map(
    ({ reference, target }, i) =>
      `LEFT JOIN ${tableRef(schema, target)} l${i} ON l${i}.uid = ${BASE}.${quoteIdent(reference.mapping)}`,
  );
  const decode = (row: readonly unknown[]): RecordValues => {
    const values = decodeColumns(fields, row, 0);
    if (lookups.length === 0) return values;
    const found: Record<string, RecordValues | null> = {};
    lookups.forEach((lookup, i) => {
      found[lookup.reference.name] =
        row[uidAt[i] as number] == null ? null : decodeColumns(lookup.fields, row, starts[i] as number);
    });
    (values as WithLookups)[LOOKUPS] = found;
    return values;
  };
  const own = fields.map((field) => `${BASE}.${quoteIdent(field.mapping)}`);
  const selected = [...own, ...looked];
  return {
    columns: selected.join(", "),
    selected,
    columnAt: new Map(own.map((column, i) => [column, i])),
    joins: joins.join(" "),
    width,
    decode,
  };
}
