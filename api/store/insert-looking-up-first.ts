/**
 * `RecordWriter.insertUnlessTaken` for an engine whose insert cannot itself
 * do nothing when a unique key is taken (SQLite, MongoDB): the key is looked
 * up first, in the same unit of work, which makes the two steps one.
 * PostgreSQL inserts or does nothing in one statement instead.
 */
import type { ObjectDef } from "../model/catalogue.ts";
import type { RecordValues } from "../model/record-values.ts";
import type { RecordReader, RecordWriter } from "./ports/records-port.ts";

export function insertLookingUpFirst(
  find: RecordReader["findRecordByValue"],
  insert: (tenantId: string, object: ObjectDef, values: RecordValues) => Promise<void>,
): RecordWriter["insertUnlessTaken"] {
  return async (tenantId, object, values, key) => {
    const holder = await find(tenantId, object, key, values[key.name] ?? null);
    if (holder) return holder;
    await insert(tenantId, object, values);
    return null;
  };
}
