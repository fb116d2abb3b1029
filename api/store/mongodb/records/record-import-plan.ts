/**
 * What a copy of a store writes into the MongoDB engine, pure: a page of
 * records as another store read them, or the tenant's sequences, in; the
 * ordered driver writes out (planned-write.ts). Records are written with
 * their unique keys and the gates of their UIDs (write-skew.ts), without a
 * reference check or a reference gate: a copy writes records before those they
 * point at, and the store it copies kept its references.
 */
import { COLLECTION } from "../../../../common/store/mongodb/layout.ts";
import type { ObjectDef } from "../../../model/catalogue.ts";
import type { RecordValues } from "../../../model/record-values.ts";
import type { SequenceValue } from "../../ports/records-port.ts";
import { type GuardUpdate, gateOf, guardUpdates } from "../write-skew.ts";
import { type PlannedWrite, plannedObject } from "./planned-write.ts";
import { keyedFields, recordDocument, uidFieldOf } from "./record-documents.ts";
import { recordCollectionOf } from "./record-layout.ts";
import { type KeyEntry, keyInserts } from "./record-write-plan.ts";
import { sequenceCounterId } from "./sequence-counters.ts";

/**
 * Copying a store: records of `object` as another store read them (every field), with their keys
 * and the gates of their UIDs (each once); no reference check, no reference gate.
 */
export function planImport(
  tenantId: string,
  object: ObjectDef,
  records: readonly RecordValues[],
): PlannedWrite[] {
  if (records.length === 0) return [];
  const uidField = uidFieldOf(object);
  const keyed = keyedFields(object.fields);
  const keys: KeyEntry[] = [];
  const gates = new Map<number, GuardUpdate>();
  for (const values of records) {
    const uid = values[uidField.name] as string;
    for (const field of keyed) keys.push({ field, value: values[field.name] ?? null, uid });
    if (gates.has(gateOf(uid))) continue;
    const [gate] = guardUpdates({
      kind: "writeRecord",
      tenantId,
      object: plannedObject(object),
      uid,
      references: [],
    });
    gates.set(gateOf(uid), gate as GuardUpdate);
  }
  const inserted: PlannedWrite = {
    kind: "insert",
    collection: recordCollectionOf(object),
    documents: records.map((values) => recordDocument(tenantId, object, values)),
    clashes: records.map((values) => ({ field: uidField, value: values[uidField.name] ?? null })),
  };
  const gateUpdates: PlannedWrite = {
    kind: "updates",
    collection: COLLECTION.writeGates,
    updates: [...gates.values()].map(({ filter, update, upsert }) => ({ filter, update, upsert })),
  };
  return [inserted, ...keyInserts(tenantId, object, keys), gateUpdates];
}

/** Copying a store: each sequence's counter set to the last value it handed out (created if need be). */
export function planSequenceImport(tenantId: string, sequences: readonly SequenceValue[]): PlannedWrite[] {
  if (sequences.length === 0) return [];
  const updates = sequences.map(({ name, value }) => ({
    filter: { _id: sequenceCounterId(tenantId, name) },
    update: { $set: { n: value } },
    upsert: true,
  }));
  return [{ kind: "updates", collection: COLLECTION.counters, updates }];
}
