/**
 * Instrumentation, not a mock: wraps a real store and counts the calls of its
 * read methods, so a test can check how many store queries a request made.
 */
import type { Store } from "../../api/store/store.ts";

const READS = [
  "findRecords",
  "listRecords",
  "countRecords",
  "listRelated",
  "findRecordByValue",
  "readJson",
] as const;

export function countingStore(store: Store): { store: Store; reads: () => number; reset: () => void } {
  let reads = 0;
  const counted = { ...store } as Store;
  for (const method of READS) {
    const read = store[method];
    if (!read) continue;
    const original = read.bind(store) as (...args: unknown[]) => Promise<unknown>;
    (counted as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      reads++;
      return original(...args);
    };
  }
  const reset = () => {
    reads = 0;
  };
  return { store: counted, reads: () => reads, reset };
}
