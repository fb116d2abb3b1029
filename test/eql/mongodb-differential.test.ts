/**
 * The differential tests of the EQL → MQL compiler (api/store/mongodb/query/). No MongoDB server
 * can run here, so the compiled pipelines are run by mingo (test/eql/support/mingo-store.ts), an
 * independent MQL interpreter, over documents the MongoDB record codec wrote:
 *
 * 1. generated filters (the generator the SQLite and PostgreSQL differential tests use, same seeds)
 *    through `listPipeline` and `countPipeline` must select exactly the records, and count exactly
 *    as many, as the in-memory evaluator;
 * 2. generated orders, with and without generated filters, read page by page through the keyset
 *    (`after` = the last record's sort keys as a cursor carries them), must give the evaluator's
 *    order (EQL's comparison, NULL lowest, UID last), each record once, with the joined lookups'
 *    values and the projected fields as they were written;
 * 3. related lists (`relatedPipeline`: the first `limit` children of each parent) must give each
 *    parent's children in that order.
 *
 * mingo is not the server. Where it is known to differ, the table DIVERGENCES below is the one
 * list: the cases that meet a difference are left out BY NAME and counted (printed, and asserted
 * to stay a small minority), and a difference the compiler avoids by construction fails the test
 * if any case meets it. Reproduce a seed with FILTER_SEED=<seed>; FILTER_COUNT, ORDER_COUNT and
 * RELATED_COUNT set the numbers of cases.
 */
import { describe, expect, test } from "bun:test";
import type { Document } from "mongodb";
import { prepareFilter } from "../../api/eql/check-filter.ts";
import type { CheckedCondition, CheckedFilter, FieldOperand } from "../../api/eql/checked-filter.ts";
import { comparable, compareValues } from "../../api/eql/compare-values.ts";
import { evaluateFilter } from "../../api/eql/evaluate-filter.ts";
import { type OrderTerm, parseOrderBy } from "../../api/eql/parse-order-by.ts";
import type { FieldDef, ObjectDef } from "../../api/model/catalogue.ts";
import { findField } from "../../api/model/catalogue.ts";
import type { RecordValues } from "../../api/model/record-values.ts";
import { readSortKey } from "../../api/store/mongodb/query/keyset.ts";
import { countPipeline, listPipeline, relatedPipeline } from "../../api/store/mongodb/query/list-pipeline.ts";
import { JOINED_FIELD } from "../../api/store/mongodb/query/mql-layout.ts";
import { comparableKey, decodeFields, valueKey } from "../../api/store/mongodb/record-codec.ts";
import { type DifferentialEngine, runDifferential } from "./support/differential.ts";
import { FilterGenerator } from "./support/generate-filter.ts";
import { generateRecords } from "./support/generate-records.ts";
import { MingoStore, TEST_LAYOUT } from "./support/mingo-store.ts";
import { createRandom, type Random } from "./support/prng.ts";
import { TEST_CATALOGUE, testObject } from "./support/test-catalogue.ts";
import { NOW, OWNER_UIDS, THING_UIDS } from "./support/value-pools.ts";

const SEEDS = process.env.FILTER_SEED ? [Number(process.env.FILTER_SEED)] : [20240501, 77];
const FILTERS = Number(process.env.FILTER_COUNT ?? 10000);
const ORDERS = Number(process.env.ORDER_COUNT ?? 400);
const RELATED = Number(process.env.RELATED_COUNT ?? 200);
const OFFSET_EVERY = 4;

// ---------------------------------------------------------------------------------------------
// The records of a seed, and how the evaluator reads them.

interface Data {
  records: Map<string, RecordValues[]>;
  byUid: Map<string, Map<string, RecordValues>>;
}

/** The records of `seed`, as runDifferential generates them. */
function generated(seed: number): Map<string, RecordValues[]> {
  const random = createRandom(seed);
  return new Map<string, RecordValues[]>([
    ["Things", generateRecords(testObject("Things"), THING_UIDS, random)],
    ["Owners", generateRecords(testObject("Owners"), OWNER_UIDS, random)],
    ["Users", []],
  ]);
}

function dataOf(records: ReadonlyMap<string, RecordValues[]>): Data {
  const byUid = new Map(
    [...records].map(([name, rows]) => [name, new Map(rows.map((row) => [String(row.UID), row]))]),
  );
  return { records: new Map(records), byUid };
}

const contextOf = (data: Data) => ({
  now: NOW,
  lookup: (name: string, uid: string) => data.byUid.get(name)?.get(uid) ?? null,
  select: (name: string) => data.records.get(name) ?? [],
});

/** A path's value on a record, through its lookups (a dangling reference reads as absent). */
function read(data: Data, record: RecordValues | null, operand: FieldOperand): unknown {
  let current = record;
  for (const hop of operand.hops) {
    const uid = current?.[hop.reference.name];
    current = typeof uid === "string" ? (data.byUid.get(hop.target.name)?.get(uid) ?? null) : null;
  }
  return current?.[operand.field.name] ?? null;
}

// ---------------------------------------------------------------------------------------------
// DIVERGENCES: every known way mingo answers otherwise than a MongoDB 7.0 server, in one place.

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
const NEVER_NULL = new Set([`${TEST_LAYOUT.valuesPath}.uid`, "$parent"]);

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

interface Divergence {
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

let loadedDocuments: readonly Document[] = [];
const missingIn = (_data: Data, term: OrderTerm) =>
  loadedDocuments.some(
    (document) =>
      document.o === term.operand.field.objectName &&
      !(comparableKey(term.operand.field) in ((document.d as Document) ?? {})),
  );

function divergenceOf(check: (divergence: Divergence) => boolean): string | null {
  return DIVERGENCES.find(check)?.name ?? null;
}

/** Prints the cases run and left out by name; fails if a divergence met "by none" was met. */
function report(label: string, excluded: Record<string, number>, run: number) {
  const names = DIVERGENCES.map((divergence) => `${divergence.name}: ${excluded[divergence.name] ?? 0}`);
  console.log(`mongodb differential (${label}): ${run} run; excluded by name: ${names.join(", ")}`);
  const avoided = DIVERGENCES.filter((divergence) => divergence.met === "by none");
  expect(avoided.filter((divergence) => (excluded[divergence.name] ?? 0) > 0).map((d) => d.name)).toEqual([]);
  expect(Object.keys(excluded).filter((name) => !DIVERGENCES.some((d) => d.name === name))).toEqual([]);
}

// ---------------------------------------------------------------------------------------------
// The order EQL defines.

type Compare = (
  a: NonNullable<ReturnType<typeof comparable>>,
  b: NonNullable<ReturnType<typeof comparable>>,
) => number;
const mingoCompare: Compare = (a, b) =>
  typeof a === "string" && typeof b === "string" ? utf16Sign(a, b) : compareValues(a, b);

/** `rows` in `order` (values compared by `compare`, NULL lowest), as UIDs. */
function sortRows(
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

// ---------------------------------------------------------------------------------------------
// 1. Filters.

const COUNT_EVERY = 5;

interface Counts {
  run: number;
  checked: number;
  wrong: string[];
}

const uidOf = (object: ObjectDef) => findField(object, "UID") as FieldDef;
const uidsOf = (documents: Document[]) => documents.map((document) => String((document.d as Document).uid));

function mingoEngine(store: MingoStore, counts: Counts): DifferentialEngine {
  let data = dataOf(new Map());
  const pipelineOf = (object: ObjectDef, filter: CheckedFilter, now: number) =>
    listPipeline(
      object,
      {
        filter,
        order: parseOrderBy(null, object, TEST_CATALOGUE),
        after: null,
        offset: 0,
        limit: 1000,
        now,
        fields: [uidOf(object)],
      },
      TEST_LAYOUT,
    );
  return {
    load: (records) => {
      data = dataOf(records as Map<string, RecordValues[]>);
      store.load(records);
      loadedDocuments = store.all();
      expect(loadedDocuments.every((document) => typeof (document.d as Document).uid === "string")).toBe(
        true,
      );
    },
    divergence: (object, filter, now) =>
      divergenceOf(
        (divergence) => divergence.filter?.(filter, pipelineOf(object, filter, now), data) ?? false,
      ),
    select: (object, filter, now) => {
      const uids = uidsOf(store.aggregate(object, pipelineOf(object, filter, now)));
      // Counts run the same stages; one filter in COUNT_EVERY is counted too.
      if (counts.run++ % COUNT_EVERY === 0) {
        const [counted] = store.aggregate(object, countPipeline(object, filter, now, TEST_LAYOUT));
        counts.checked++;
        if ((counted?.n ?? 0) !== uids.length && counts.wrong.length < 10)
          counts.wrong.push(`${object.name}: count ${counted?.n ?? 0}, listed ${uids.length}`);
      }
      return uids;
    },
  };
}

test.each(SEEDS)(
  `mingo runs the compiled filters and selects what the evaluator selects (seed %d, ${FILTERS} filters)`,
  async (seed) => {
    const store = new MingoStore();
    const counts: Counts = { run: 0, checked: 0, wrong: [] };
    const result = await runDifferential(mingoEngine(store, counts), seed, FILTERS);
    const excludedTotal = Object.values(result.excluded).reduce((sum, n) => sum + n, 0);
    console.log(
      `mongodb differential: FILTER_SEED=${seed}, ${FILTERS} filters, ${result.mismatchCount} mismatches, ${Math.round(result.elapsedMs)} ms`,
    );
    report(`filters, seed ${seed}`, result.excluded, FILTERS - excludedTotal);
    if (result.mismatchCount > 0) console.log(result.mismatches.join("\n"));
    expect(result.mismatchCount).toBe(0);
    expect(counts.wrong).toEqual([]);
    expect(counts.run).toBe(FILTERS - excludedTotal);
    expect(counts.checked).toBe(Math.ceil(counts.run / COUNT_EVERY));
    expect(excludedTotal).toBeLessThan(FILTERS * 0.02);
    expect(result.proper).toBeGreaterThan(FILTERS * 0.3);
  },
  600_000,
);

// ---------------------------------------------------------------------------------------------
// 2. Orders, keyset pages, projected fields and joined lookups. 3. Related lists.

/** Paths an order may name on `object`: its fields but multipicklists, and lookups `depth` references deep. */
function orderPaths(object: ObjectDef, depth: number, prefix = ""): string[] {
  return object.fields.flatMap((field) => {
    if (field.type === "multipicklist") return [];
    const own = `${prefix}${field.name}`;
    if (field.type !== "reference" || depth === 0 || field.referenceTo === "Users") return [own];
    return [own, ...orderPaths(testObject(field.referenceTo ?? ""), depth - 1, `${own}.`)];
  });
}

/** An order of one to three terms (each direction), sometimes ending in UID DESC. */
function randomOrder(object: ObjectDef, random: Random): OrderTerm[] {
  const paths = orderPaths(object, 2);
  const terms = Array.from(
    { length: 1 + random.int(3) },
    () => `${random.pick(paths)}${random.pick(["", " ASC", " DESC"])}`,
  );
  if (random.chance(0.2)) terms.push("UID DESC");
  return parseOrderBy(terms.join(", "), object, TEST_CATALOGUE);
}

/** A few fields to read besides UID, so projections are exercised. */
function randomFields(object: ObjectDef, random: Random): FieldDef[] {
  const others = object.fields.filter((field) => field.type !== "id");
  return [uidOf(object), ...others.filter(() => random.chance(0.3))];
}

interface Case {
  object: ObjectDef;
  filter: CheckedFilter | null;
  order: OrderTerm[];
  fields: FieldDef[];
}

function randomCase(random: Random, generator: FilterGenerator, object: ObjectDef): Case {
  const filter = random.chance(0.5)
    ? prepareFilter(generator.condition(object, 2), object, TEST_CATALOGUE)
    : null;
  return { object, filter, order: randomOrder(object, random), fields: randomFields(object, random) };
}

/** The divergence a case meets: its filter's (on its compiled list pipeline) or its order's (on the rows it sorts). */
function caseDivergence(
  c: Case,
  rows: readonly RecordValues[],
  data: Data,
  pipeline: readonly Document[],
): string | null {
  return divergenceOf(
    (divergence) =>
      (c.filter !== null && (divergence.filter?.(c.filter, pipeline, data) ?? false)) ||
      (divergence.order?.(c.order, rows, data) ?? false),
  );
}

/** The fields `fields` of `record`, and of the owner it refers to through `reference` (null when none). */
const pick = (record: RecordValues | null, fields: readonly FieldDef[]) =>
  record === null
    ? null
    : Object.fromEntries(fields.map((field) => [field.name, record[field.name] ?? null]));

describe.each(SEEDS)("seed %d", (seed) => {
  const data = dataOf(generated(seed));
  const store = new MingoStore();
  store.load(data.records);
  loadedDocuments = store.all();
  const owners = testObject("Owners");
  const ownerFields = [
    uidOf(owners),
    findField(owners, "Name") as FieldDef,
    findField(owners, "Rank") as FieldDef,
  ];

  test(`keyset pages give EQL's order, the projected fields and the joined lookups (${ORDERS} orders)`, () => {
    const random = createRandom(seed + 1);
    const generator = new FilterGenerator(random);
    const excluded: Record<string, number> = {};
    const wrong: string[] = [];
    let run = 0;
    for (let i = 0; i < ORDERS; i++) {
      const object = testObject(random.chance(0.7) ? "Things" : "Owners");
      const c = randomCase(random, generator, object);
      const pageSize = 1 + random.int(9);
      const rows = (data.records.get(object.name) ?? []).filter(
        (record) => c.filter === null || evaluateFilter(c.filter, record, contextOf(data)),
      );
      const reference = object.name === "Things" ? (findField(object, "Owner") as FieldDef) : null;
      const lookups = reference ? [{ reference, target: owners, fields: ownerFields }] : undefined;
      const query = (after: (string | number | null)[] | null, offset: number) => ({
        filter: c.filter,
        order: c.order,
        after,
        offset,
        limit: pageSize,
        now: NOW,
        fields: c.fields,
        lookups,
      });
      const divergence = caseDivergence(c, rows, data, listPipeline(object, query(null, 0), TEST_LAYOUT));
      if (divergence !== null) {
        excluded[divergence] = (excluded[divergence] ?? 0) + 1;
        continue;
      }
      run++;
      const expected = sortRows(rows, c.order, data, compareValues);
      const byKeyset: string[] = [];
      let after: (string | number | null)[] | null = null;
      for (let page = 0; page <= rows.length; page++) {
        const documents = store.aggregate(object, listPipeline(object, query(after, 0), TEST_LAYOUT));
        for (const document of documents) {
          const values = decodeFields(c.fields, document.d as Document);
          const uid = String(values.UID);
          byKeyset.push(uid);
          const record = data.byUid.get(object.name)?.get(uid) ?? null;
          if (JSON.stringify(values) !== JSON.stringify(pick(record, c.fields)))
            wrong.push(`#${i} ${uid}: read ${JSON.stringify(values)}`);
          if (reference) {
            const joined = (document[JOINED_FIELD] as Document)[valueKey(reference)] as Document | null;
            const target = data.byUid.get("Owners")?.get(String(record?.Owner)) ?? null;
            const read = joined === null ? null : decodeFields(ownerFields, joined);
            if (JSON.stringify(read) !== JSON.stringify(pick(target, ownerFields)))
              wrong.push(`#${i} ${uid}: joined ${JSON.stringify(read)}`);
          }
        }
        const last = documents.at(-1);
        if (documents.length < pageSize || !last) break;
        after = readSortKey(last);
      }
      // Offset pages (`$skip`) for one case in OFFSET_EVERY: they run the same sort.
      const byOffset: string[] | null = i % OFFSET_EVERY === 0 ? [] : null;
      for (let offset = 0; byOffset && offset <= rows.length; offset += pageSize)
        byOffset.push(
          ...uidsOf(store.aggregate(object, listPipeline(object, query(null, offset), TEST_LAYOUT))),
        );
      for (const [how, got] of [
        ["keyset", byKeyset],
        ["offset", byOffset],
      ] as const) {
        if (got !== null && got.join() !== expected.join())
          wrong.push(
            `#${i} ${how} ${object.name} order ${c.order.map((t) => `${t.operand.hops.map((h) => h.reference.name).join(".")}.${t.operand.field.name} ${t.direction}`)}\n  got ${got}\n  exp ${expected}`,
          );
      }
    }
    report(`orders, seed ${seed}`, excluded, run);
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(run).toBeGreaterThan(ORDERS * 0.6);
  }, 300_000);

  test(`related lists give each parent's first children in order (${RELATED} cases)`, () => {
    const random = createRandom(seed + 2);
    const generator = new FilterGenerator(random);
    const things = testObject("Things");
    const excluded: Record<string, number> = {};
    const wrong: string[] = [];
    let run = 0;
    for (let i = 0; i < RELATED; i++) {
      const c = randomCase(random, generator, things);
      const reference = findField(things, random.pick(["Owner", "Backup"])) as FieldDef;
      const parents = [...OWNER_UIDS.filter(() => random.chance(0.4)), "owner-gone", OWNER_UIDS[0] as string];
      const limit = random.int(5);
      const rows = (data.records.get("Things") ?? []).filter(
        (record) => c.filter === null || evaluateFilter(c.filter, record, contextOf(data)),
      );
      const query = { filter: c.filter, order: c.order, limit, now: NOW, fields: c.fields };
      const pipeline = relatedPipeline(things, reference, parents, query, TEST_LAYOUT);
      const divergence = caseDivergence(c, rows, data, pipeline);
      if (divergence !== null) {
        excluded[divergence] = (excluded[divergence] ?? 0) + 1;
        continue;
      }
      run++;
      const got = new Map<string, string[]>();
      for (const document of store.aggregateDatabase(pipeline)) {
        const values = decodeFields([...c.fields, reference], document.d as Document);
        const parent = String(values[reference.name]);
        got.set(parent, [...(got.get(parent) ?? []), String(values.UID)]);
      }
      for (const parent of new Set(parents)) {
        const children = rows.filter((record) => record[reference.name] === parent);
        const expected = sortRows(children, c.order, data, compareValues).slice(0, limit);
        const listed = got.get(parent) ?? [];
        if (listed.join() !== expected.join())
          wrong.push(`#${i} ${parent}: got ${listed}, expected ${expected}`);
      }
      const unexpected = [...got.keys()].filter((parent) => !parents.includes(parent));
      if (unexpected.length > 0) wrong.push(`#${i} children of ${unexpected}`);
    }
    report(`related, seed ${seed}`, excluded, run);
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(run).toBeGreaterThan(RELATED * 0.6);
  }, 300_000);
});
