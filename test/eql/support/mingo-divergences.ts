/**
 * DIVERGENCES: every known way mingo, the MQL interpreter the MongoDB differential tests run the
 * compiled pipelines with (mingo-store.ts), answers otherwise than a MongoDB 7.0 server, in one
 * place, each with the check that tells whether a case (a filter's pipeline, an order over its
 * rows) would meet it. Cases meeting one met "by some cases" are left out and counted by name;
 * one met "by none" (avoided by the compiler and the codec by construction) fails the test.
 */
import { expect } from "bun:test";
import type { Document } from "mongodb";
import type { CheckedCondition, CheckedFilter, FieldOperand } from "../../../api/eql/checked-filter.ts";
import { compareValues } from "../../../api/eql/compare-values.ts";
import type { OrderTerm } from "../../../api/eql/parse-order-by.ts";
import type { RecordValues } from "../../../api/model/record-values.ts";
import { comparableKey } from "../../../api/store/mongodb/record-codec.ts";
import { TEST_LAYOUT } from "./mingo-store.ts";
import { type Compare, type Data, read, sortRows } from "./seed-data.ts";
import { testObject } from "./test-catalogue.ts";

/** Sign of a code-point comparison (the server: UTF-8 bytes under the simple collation; EQL). */
const codePointSign = (a: string, b: string) => Math.sign(compareValues(a, b));
/** Sign of mingo's comparison: JavaScript's `<` on UTF-16 code units. */
const utf16Sign = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const ordersDiffer = (a: unknown, b: unknown) =>
  typeof a === "string" && typeof b === "string" && codePointSign(a, b) !== utf16Sign(a, b);

/** True when a text ordering comparison of `condition` (sub-queries included) meets a pair the two orders disagree on. */
function meetsUtf16Order(condition: CheckedCondition, objectName: string, data: Data): boolean {
  switch (condition.kind) {
    case "and":
    case "or":
      return condition.operands.some((operand) => meetsUtf16Order(operand, objectName, data));
    case "not":
      return meetsUtf16Order(condition.operand, objectName, data);
    case "inSelect":
      return condition.where !== null && meetsUtf16Order(condition.where, condition.object.name, data);
    case "compare": {
      const { left, right, operator, valueClass } = condition;
      if (valueClass !== "text" || operator === "==" || operator === "!=") return false;
      return (data.records.get(objectName) ?? []).some((record) => {
        const x = read(data, record, left as FieldOperand);
        const y = right.kind === "value" ? right.value : read(data, record, right as FieldOperand);
        return ordersDiffer(x, y);
      });
    }
    default:
      return false;
  }
}

/** Every `$lookup` of a pipeline, its sub-pipelines' included. */
function lookupsOf(pipeline: readonly Document[]): Document[] {
  return pipeline.flatMap((stage) => {
    const lookup = stage.$lookup as Document | undefined;
    return lookup ? [lookup, ...lookupsOf((lookup.pipeline as Document[] | undefined) ?? [])] : [];
  });
}

/** Every `$match` query of a pipeline, its sub-pipelines' included. */
function* matchesOf(pipeline: readonly Document[]): Generator<Document> {
  for (const stage of pipeline) {
    if (stage.$match) yield stage.$match as Document;
    const inner = (stage.$lookup as { pipeline?: Document[] } | undefined)?.pipeline;
    if (inner) yield* matchesOf(inner);
  }
}

const COMPARISONS = ["$eq", "$ne", "$lt", "$lte", "$gt", "$gte"];
const isFieldPath = (operand: unknown): operand is string =>
  typeof operand === "string" && operand.startsWith("$") && !operand.startsWith("$$");

/**
 * Operands never null: the UID path every record document holds (checked on load), and `$$parent`,
 * which `relatedPipeline` binds to each parent UID the caller gives (strings).
 */
const NEVER_NULL = new Set([TEST_LAYOUT.uidPath, "$parent"]);

/**
 * True when some `$expr` comparison could see a null or missing operand: an ordering one with a side
 * not required non-null (`{p: {$ne: null}}`) by the same `$and`, an equality one with neither side
 * so required (or never null) nor both read through `$ifNull`.
 */
function exprSeesNull(query: Document, guarded: ReadonlySet<string> = NEVER_NULL): boolean {
  const own = new Set(guarded);
  for (const member of (query.$and as Document[] | undefined) ?? [query]) {
    for (const [path, test] of Object.entries(member)) {
      if ((test as Document | null)?.$ne === null) own.add(path);
    }
  }
  for (const [key, value] of Object.entries(query)) {
    if (key === "$and" || key === "$or" || key === "$nor") {
      if ((value as Document[]).some((member) => exprSeesNull(member, key === "$and" ? own : guarded)))
        return true;
    } else if (key === "$expr" && typeof value === "object" && value !== null) {
      const [operator, operands] = Object.entries(value as Document)[0] ?? [];
      if (!operator || !COMPARISONS.includes(operator)) continue;
      const sides = operands as unknown[];
      const isGuarded = (side: unknown) => typeof side === "string" && own.has(side.slice(1));
      const viaIfNull = (side: unknown) => (side as Document | null)?.$ifNull !== undefined;
      const safe =
        operator === "$eq" || operator === "$ne"
          ? sides.some(isGuarded) || sides.every(viaIfNull)
          : sides.every((side) => isGuarded(side) || !(isFieldPath(side) || typeof side === "string"));
      if (!safe) return true;
    }
  }
  return false;
}

export interface Divergence {
  name: string;
  /** What mingo does, and what the server does instead. */
  what: string;
  /**
   * Met by some generated cases (left out and counted), or by none: the compiler and the codec
   * avoid it by construction, so a case meeting it is a bug the server would show, and fails.
   */
  met: "by some cases" | "by none";
  /** The filter (its compiled pipeline, on the seed's records) would meet it. */
  filter?(filter: CheckedFilter, pipeline: readonly Document[], data: Data): boolean;
  /** The order (the records' sequence under it, both ways) would meet it. */
  order?(order: readonly OrderTerm[], rows: readonly RecordValues[], data: Data): boolean;
}

const DIVERGENCES: readonly Divergence[] = [
  {
    name: "utf16-string-order",
    met: "by some cases",
    what: "mingo orders strings by UTF-16 code units (JavaScript's <), the server under the simple collation by UTF-8 bytes, i.e. code points, as EQL does: a character above U+FFFF (a surrogate pair) sorts below U+E000–U+FFFF in mingo and above them on the server",
    filter: (filter, _pipeline, data) => meetsUtf16Order(filter.condition, filter.object.name, data),
    order: (order, rows, data) => {
      const inCodePoints = sortRows(rows, order, data, compareValues).join();
      return inCodePoints !== sortRows(rows, order, data, mingoCompare).join();
    },
  },
  {
    name: "expr-null-comparison",
    met: "by none",
    what: "in $expr, mingo answers a comparison with a null or missing operand false (and $eq of missing and null true), the server orders null and missing lowest (and missing ≠ null): the compiler guards every $expr comparison (non-null first, or $ifNull on both sides), so a hit here would be a compiler bug the server would show",
    filter: (_filter, pipeline) => [...matchesOf(pipeline)].some((query) => exprSeesNull(query)),
  },
  {
    name: "missing-sorts-before-null",
    met: "by none",
    what: "mingo's $sort puts a missing field before null, the server sorts them as equal: the codec writes every field (NULL as null) and keys read through a lookup are sorted as computed fields made null when missing, so a hit here is a sorted own field missing from a document",
    order: (order, _rows, data) =>
      order.some((term) => term.operand.hops.length === 0 && missingIn(data, term)),
  },
  {
    name: "lookup-localfield-with-pipeline",
    met: "by none",
    what: "given localField/foreignField and a pipeline, mingo runs the pipeline over the whole foreign collection, the server over the matching documents only: the compiler joins with let + $expr instead",
    filter: (_filter, pipeline) => lookupsOf(pipeline).some((lookup) => lookup.localField && lookup.pipeline),
  },
];
// Not per case, so not in the table: mingo knows no BSON numeric wrappers (Int32, Long, Decimal128)
// and compares them as objects. The documents are handed to it as the driver's deserializer returns
// them (int32 and int64 as numbers), and the compiler never compares a Decimal128 (decimals are
// compared and sorted through their double shadow), so no case depends on it.

/** Some document of the term's object has no value at all (not even null) at the term's own path. */
function missingIn(data: Data, term: OrderTerm): boolean {
  const { field } = term.operand;
  const objectId = testObject(field.objectName).id;
  return data.documents.some(
    (document) =>
      document.o === objectId &&
      (field.type === "id"
        ? document[TEST_LAYOUT.uidPath] === undefined
        : !(comparableKey(field) in ((document.d as Document | undefined) ?? {}))),
  );
}

export function divergenceOf(check: (divergence: Divergence) => boolean): string | null {
  return DIVERGENCES.find(check)?.name ?? null;
}

/** Prints the cases run and left out by name; fails if a divergence met "by none" was met. */
export function report(label: string, excluded: Record<string, number>, run: number) {
  const names = DIVERGENCES.map((divergence) => `${divergence.name}: ${excluded[divergence.name] ?? 0}`);
  console.log(`mongodb differential (${label}): ${run} run; excluded by name: ${names.join(", ")}`);
  const avoided = DIVERGENCES.filter((divergence) => divergence.met === "by none");
  expect(avoided.filter((divergence) => (excluded[divergence.name] ?? 0) > 0).map((d) => d.name)).toEqual([]);
  expect(Object.keys(excluded).filter((name) => !DIVERGENCES.some((d) => d.name === name))).toEqual([]);
}

const mingoCompare: Compare = (a, b) =>
  typeof a === "string" && typeof b === "string" ? utf16Sign(a, b) : compareValues(a, b);
