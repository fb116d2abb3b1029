/**
 * Loads something for each record of a listed batch with one call, the first
 * time any of them asks: records listed together carry their batch's UIDs
 * (`markBatch`), so the loader need not wait a tick to learn who else will ask.
 * When `fetch` answers within the call (values, not a promise: the embedded
 * store, through `whenSettled`), every record gets its value synchronously.
 * Records outside a batch (`xById`, a lookup read through a loader) are
 * collected per tick by the batch loader.
 */
import type { RecordValues } from "../../model/record-values.ts";
import { createBatchLoader } from "./batch-loader.ts";

const BATCH = Symbol("batch");
type InBatch = RecordValues & { [BATCH]?: readonly string[] };

/** Marks `records` as one batch: a loader asked for one of them loads for all. */
export function markBatch(records: readonly RecordValues[]): void {
  const uids = records.map((record) => record.UID as string);
  for (const record of records) (record as InBatch)[BATCH] = uids;
}

export interface SiblingLoader<V> {
  load(record: RecordValues): V | Promise<V>;
}

/** The values of a batch: at once when the store answered within the call, else when it does. */
type Found<V> = Map<string, V> | Promise<Map<string, V>>;

export function createSiblingLoader<V>(
  fetch: (uids: readonly string[]) => Found<V>,
  missing: V,
): SiblingLoader<V> {
  const batches = new Map<readonly string[], Found<V>>();
  const fallback = createBatchLoader(async (uids: string[]) => fetch(uids), missing);
  return {
    load(record) {
      const uid = record.UID as string;
      const batch = (record as InBatch)[BATCH];
      if (!batch) return fallback.load(uid);
      let found = batches.get(batch);
      if (!found) {
        try {
          found = fetch(batch);
        } catch (error) {
          // Every row of the batch gets the failure, without fetching again.
          found = Promise.reject(error);
        }
        batches.set(batch, found);
      }
      return found instanceof Promise
        ? found.then((values) => values.get(uid) ?? missing)
        : (found.get(uid) ?? missing);
    },
  };
}
