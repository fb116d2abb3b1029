/**
 * The differential test of the EQL → MQL compiler's orders (api/store/mongodb/query/), run by
 * mingo as mongodb-differential.test.ts runs filters: generated orders (one to three terms, own
 * fields and lookup paths two references deep, each direction), with and without generated
 * filters, read page by page through the keyset (`after` = the last record's sort keys as a cursor
 * carries them) and, for one order in OFFSET_EVERY, through offsets, must give the records in
 * EQL's order (the evaluator's comparison, NULL lowest, UID last), each once, with the projected
 * fields and the joined lookups' values as they were written (read by the engine's decoding,
 * decode-record.ts); related lists (`relatedPipeline`, the first `limit` children of each parent)
 * must give each parent's children in that order.
 * Cases meeting a known divergence of mingo's (test/eql/support/mingo-divergences.ts) are left
 * out by name and counted. ORDER_COUNT and RELATED_COUNT set the numbers of cases.
 */
import { describe, expect, test } from "bun:test";
import type { Document } from "mongodb";
import { prepareFilter } from "../../api/eql/check-filter.ts";
import type { CheckedFilter } from "../../api/eql/checked-filter.ts";
import { compareValues } from "../../api/eql/compare-values.ts";
import { evaluateFilter } from "../../api/eql/evaluate-filter.ts";
import { type OrderTerm, parseOrderBy } from "../../api/eql/parse-order-by.ts";
import type { FieldDef, ObjectDef } from "../../api/model/catalogue.ts";
import { findField } from "../../api/model/catalogue.ts";
import type { RecordValues } from "../../api/model/record-values.ts";
import { readSortKey } from "../../api/store/mongodb/query/keyset.ts";
import { listPipeline, relatedPipeline } from "../../api/store/mongodb/query/list-pipeline.ts";
import { decodeListed, decodeRecord } from "../../api/store/mongodb/records/decode-record.ts";
import { LOOKUPS, type WithLookups } from "../../api/store/ports/records-port.ts";
import { FilterGenerator } from "./support/generate-filter.ts";
import { divergenceOf, report } from "./support/mingo-divergences.ts";
import { MingoStore, TEST_LAYOUT } from "./support/mingo-store.ts";
import { createRandom, type Random } from "./support/prng.ts";
import { contextOf, type Data, dataOf, generated, sortRows } from "./support/seed-data.ts";
import { TEST_CATALOGUE, testObject } from "./support/test-catalogue.ts";
import { NOW, OWNER_UIDS } from "./support/value-pools.ts";

const SEEDS = process.env.FILTER_SEED ? [Number(process.env.FILTER_SEED)] : [20240501, 77];
const ORDERS = Number(process.env.ORDER_COUNT ?? 400);
const RELATED = Number(process.env.RELATED_COUNT ?? 200);
const OFFSET_EVERY = 4;

const uidOf = (object: ObjectDef) => findField(object, "UID") as FieldDef;
const uidsOf = (documents: Document[]) => documents.map((document) => String(document.u));

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
  const store = new MingoStore();
  const records = generated(seed);
  store.load(records);
  const data = dataOf(records, store.all());
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
          const values = decodeListed(c.fields, lookups, document);
          const uid = String(values.UID);
          byKeyset.push(uid);
          const record = data.byUid.get(object.name)?.get(uid) ?? null;
          if (!Bun.deepEquals(Object.fromEntries(Object.entries(values)), pick(record, c.fields)))
            wrong.push(`#${i} ${uid}: read ${JSON.stringify(values)}`);
          if (reference) {
            const target = data.byUid.get("Owners")?.get(String(record?.Owner)) ?? null;
            const read = (values as WithLookups)[LOOKUPS]?.[reference.name];
            if (!Bun.deepEquals(read, pick(target, ownerFields)))
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
        const values = decodeRecord([...c.fields, reference], document);
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
