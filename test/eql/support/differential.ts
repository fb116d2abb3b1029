/**
 * The differential test's loop, for any SQL engine: records generated from a seed, then filters
 * generated from the same seed, each run through the engine's compiled SQL and through the
 * in-memory evaluator; the UID sets must be equal. Reproduce a failure with FILTER_SEED=<seed>.
 * An engine whose executor is a stand-in with known divergences from the real server (mingo for
 * MongoDB) names, per filter, the divergence the filter would meet: such filters are not run, and
 * are counted by that name in the result.
 */

import { prepareFilter } from "../../../api/eql/check-filter.ts";
import type { CheckedFilter } from "../../../api/eql/checked-filter.ts";
import { type EvaluationContext, evaluateFilter } from "../../../api/eql/evaluate-filter.ts";
import type { ObjectDef } from "../../../api/model/catalogue.ts";
import type { RecordValues } from "../../../api/model/record-values.ts";
import { FilterGenerator } from "./generate-filter.ts";
import { generateRecords } from "./generate-records.ts";
import { createRandom } from "./prng.ts";
import { TEST_CATALOGUE, testObject } from "./test-catalogue.ts";
import { NOW, OWNER_UIDS, THING_UIDS } from "./value-pools.ts";

/** An engine under test: stores a seed's records, then answers each filter with the matching UIDs. */
export interface DifferentialEngine {
  /** Stores `records` (by object name) for the filters that follow. */
  load(records: ReadonlyMap<string, RecordValues[]>): Promise<void> | void;
  /** The UIDs of `object`'s records that `filter` selects, compiled with `now` as NOW(). */
  select(object: ObjectDef, filter: CheckedFilter, now: number): Promise<string[]> | string[];
  /**
   * The name of a known divergence of the engine's executor from the real server that `filter`
   * would meet on the loaded records (it is then left out, and counted under that name), or null.
   */
  divergence?(object: ObjectDef, filter: CheckedFilter, now: number): string | null;
}

export interface DifferentialResult {
  /** The first few disagreements, each with its filter and both answers. */
  mismatches: string[];
  mismatchCount: number;
  /** Filters selecting some but not all records: the filters must discriminate. */
  proper: number;
  /** Filters left out, by the name of the divergence they would meet (`DifferentialEngine.divergence`). */
  excluded: Record<string, number>;
  elapsedMs: number;
}

/** Runs `count` generated filters of `seed` through `engine` and the evaluator. */
export async function runDifferential(
  engine: DifferentialEngine,
  seed: number,
  count: number,
): Promise<DifferentialResult> {
  const random = createRandom(seed);
  const records = new Map<string, RecordValues[]>([
    ["Things", generateRecords(testObject("Things"), THING_UIDS, random)],
    ["Owners", generateRecords(testObject("Owners"), OWNER_UIDS, random)],
    ["Users", []],
  ]);
  await engine.load(records);
  const context: EvaluationContext = {
    now: NOW,
    lookup: (objectName, uid) => records.get(objectName)?.find((record) => record.UID === uid) ?? null,
    select: (objectName) => records.get(objectName) ?? [],
  };
  const inMemory = (object: ObjectDef, filter: CheckedFilter) =>
    (records.get(object.name) ?? [])
      .filter((record) => evaluateFilter(filter, record, context))
      .map((record) => String(record.UID))
      .sort();

  const started = performance.now();
  const generator = new FilterGenerator(random);
  const mismatches: string[] = [];
  let mismatchCount = 0;
  let proper = 0;
  const excluded: Record<string, number> = {};
  for (let i = 0; i < count; i++) {
    const object = testObject(random.chance(0.8) ? "Things" : "Owners");
    const text = generator.condition(object, 3);
    const filter = prepareFilter(text, object, TEST_CATALOGUE);
    const divergence = engine.divergence?.(object, filter, NOW) ?? null;
    if (divergence !== null) {
      excluded[divergence] = (excluded[divergence] ?? 0) + 1;
      continue;
    }
    const sql = [...(await engine.select(object, filter, NOW))].sort();
    const memory = inMemory(object, filter);
    if (sql.join() !== memory.join()) {
      mismatchCount++;
      if (mismatches.length < 10)
        mismatches.push(`#${i} ${object.name}: ${text}\n  sql: ${sql}\n  mem: ${memory}`);
    }
    if (sql.length > 0 && sql.length < (records.get(object.name)?.length ?? 0)) proper++;
  }
  return { mismatches, mismatchCount, proper, excluded, elapsedMs: performance.now() - started };
}
