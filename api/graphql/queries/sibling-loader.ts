/**
 * Loads something for each record of a listed batch with one call, the first
 * time any of them asks: records listed together carry their batch's UIDs
 * (`markBatch`), so the loader need not wait a tick to learn who else will ask.
 * When the call settles at once (the embedded store), every record gets its
 * value synchronously. Records outside a batch (`xById`, a lookup read through
 * a loader) are collected per tick by the batch loader.
 */
import type { RecordValues } from "../../catalogue/record-values.ts";
import { createBatchLoader } from "./batch-loader.ts";
import { whenSettled } from "./settled.ts";

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

export function createSiblingLoader<V>(
  fetch: (uids: readonly string[]) => Promise<Map<string, V>>,
  missing: V,
): SiblingLoader<V> {
  const batches = new Map<readonly string[], Promise<Map<string, V>>>();
  const fallback = createBatchLoader((uids: string[]) => fetch(uids), missing);
  return {
    load(record) {
      const uid = record.UID as string;
      const batch = (record as InBatch)[BATCH];
      if (!batch) return fallback.load(uid);
      let values = batches.get(batch);
      if (!values) {
        values = fetch(batch);
        batches.set(batch, values);
      }
      return whenSettled(values, (found) => found.get(uid) ?? missing);
    },
  };
}
