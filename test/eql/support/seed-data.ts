/**
 * A differential test's records for a seed, as runDifferential generates them, and how the
 * in-memory evaluator reads them: lookups by UID, paths through references, and the order EQL
 * defines (values compared as the evaluator compares them, NULL lowest, UID last).
 */
import type { Document } from "mongodb";
import type { FieldOperand } from "../../../api/eql/checked-filter.ts";
import { comparable } from "../../../api/eql/compare-values.ts";
import type { EvaluationContext } from "../../../api/eql/evaluate-filter.ts";
import type { OrderTerm } from "../../../api/eql/parse-order-by.ts";
import type { RecordValues } from "../../../api/model/record-values.ts";
import { generateRecords } from "./generate-records.ts";
import { createRandom } from "./prng.ts";
import { testObject } from "./test-catalogue.ts";
import { NOW, OWNER_UIDS, THING_UIDS } from "./value-pools.ts";

/** The records of a seed by object name, by UID, and the documents an engine stores them as. */
export interface Data {
  records: Map<string, RecordValues[]>;
  byUid: Map<string, Map<string, RecordValues>>;
  /** What the engine under test wrote for them (set once loaded). */
  documents: readonly Document[];
}

/** The records of `seed`, as runDifferential generates them. */
export function generated(seed: number): Map<string, RecordValues[]> {
  const random = createRandom(seed);
  return new Map<string, RecordValues[]>([
    ["Things", generateRecords(testObject("Things"), THING_UIDS, random)],
    ["Owners", generateRecords(testObject("Owners"), OWNER_UIDS, random)],
    ["Users", []],
  ]);
}

export function dataOf(
  records: ReadonlyMap<string, RecordValues[]>,
  documents: readonly Document[] = [],
): Data {
  const byUid = new Map(
    [...records].map(([name, rows]) => [name, new Map(rows.map((row) => [String(row.UID), row]))]),
  );
  return { records: new Map(records), byUid, documents };
}

/** The evaluator's context over `data`, NOW() being the differential tests' NOW. */
export const contextOf = (data: Data): EvaluationContext => ({
  now: NOW,
  lookup: (name: string, uid: string) => data.byUid.get(name)?.get(uid) ?? null,
  select: (name: string) => data.records.get(name) ?? [],
});

/** A path's value on a record, through its lookups (a dangling reference reads as absent). */
export function read(data: Data, record: RecordValues | null, operand: FieldOperand): unknown {
  let current = record;
  for (const hop of operand.hops) {
    const uid = current?.[hop.reference.name];
    current = typeof uid === "string" ? (data.byUid.get(hop.target.name)?.get(uid) ?? null) : null;
  }
  return current?.[operand.field.name] ?? null;
}

/** A comparison of two non-null values of one class. */
export type Compare = (
  a: NonNullable<ReturnType<typeof comparable>>,
  b: NonNullable<ReturnType<typeof comparable>>,
) => number;
/** `rows` in `order` (values compared by `compare`, NULL lowest), as UIDs. */
export function sortRows(
  rows: readonly RecordValues[],
  order: readonly OrderTerm[],
  data: Data,
  compare: Compare,
): string[] {
  const key = (record: RecordValues, term: OrderTerm) =>
    comparable(read(data, record, term.operand), term.operand.valueClass);
  return rows
    .toSorted((a, b) => {
      for (const term of order) {
        const [x, y] = [key(a, term), key(b, term)];
        const c = x === null ? (y === null ? 0 : -1) : y === null ? 1 : compare(x, y);
        if (c !== 0) return term.direction === "DESC" ? -c : c;
      }
      return 0;
    })
    .map((record) => String(record.UID));
}
