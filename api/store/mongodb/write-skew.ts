/**
 * Which documents each kind of write touches so that the units of work the
 * port calls serializable cannot both commit when together they would break
 * a rule: a plan in, the documents (and the updates that write them) out.
 * Pure; the record and catalogue sessions issue what it names.
 *
 * MongoDB's transactions are snapshot-isolated: two transactions that read
 * the same facts and write *different* documents both commit (write skew).
 * A check-then-act pair is closed only by making both sides write one
 * common document, so that the second to write it fails with a write
 * conflict (TransientTransactionError) and runs again, now seeing the
 * first's commit. The pairs (docs/mongodb-layout.md, "Write skew"):
 * - delete vs child insert: deleting record P (after counting no record
 *   that refers to it) and writing a record whose reference names P (after
 *   finding P). The delete writes P's document; the referring write
 *   increments P's guard count `w`. Common document: P.
 * - catalogue changes: two changes of one tenant's catalogue (each checks
 *   names, limits, referrers against the definitions it read). Each
 *   increments the tenant's catalogue counter (`bumpCatalogueVersion`, which
 *   every change calls). Common document: the counter.
 * - catalogue change vs record write: a change of object O's definition
 *   (deleting it or a field, adding a field) and a write of one of O's
 *   records made against the definition read before. The record write
 *   increments one of O's GATES gate documents (chosen by the record's UID);
 *   the catalogue change increments all of them. Common document: that gate.
 *   Gates, not one document per object, so that writes of different records
 *   of one object rarely conflict with each other (1 in GATES per pair).
 */
import { COLLECTION } from "../../../common/store/mongodb/layout.ts";

/** Gate documents per object: record writes of one object pick one each; a catalogue change takes all. */
export const GATES = 64;

/** An object as the plan needs it: its id (records' `o`) and which collection holds its records. */
export interface PlannedObject {
  id: string;
  custom: boolean;
}

/** A write of the port that takes part in a check-then-act pair. */
export type GuardedWrite =
  | { kind: "deleteRecord"; tenantId: string; object: PlannedObject; uid: string }
  | {
      kind: "writeRecord";
      tenantId: string;
      object: PlannedObject;
      uid: string;
      /** The records its reference fields name (after the write), self-references included. */
      references: readonly { object: PlannedObject; uid: string }[];
    }
  | {
      kind: "changeCatalogue";
      tenantId: string;
      /** The existing objects whose definition the change alters (none for a new object, or tracking only). */
      objects: readonly PlannedObject[];
    };

/** One document, by collection and a key that is equal for the same document. */
export interface DocumentRef {
  collection: string;
  /** The document's filter; equal filters (as JSON) name the same document. */
  filter: Record<string, unknown>;
}

/** A guard write: the document and the update that writes it (an increment, so it always changes it). */
export interface GuardUpdate extends DocumentRef {
  update: { $inc: Record<string, 1> };
  upsert: boolean;
}

const recordsOf = (object: PlannedObject) =>
  object.custom ? COLLECTION.customRecords : COLLECTION.standardRecords;

/** The record's document (record_uid identifies it: tenant, object, UID). */
const recordRef = (tenantId: string, object: PlannedObject, uid: string): DocumentRef => ({
  collection: recordsOf(object),
  filter: { t: tenantId, o: object.id, u: uid },
});

/** The gate of `uid`'s writes in `object`: FNV-1a of the UID, so every process picks the same. */
export function gateOf(uid: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < uid.length; i++) {
    hash ^= uid.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % GATES;
}

const gateRef = (tenantId: string, object: PlannedObject, gate: number): DocumentRef => ({
  collection: COLLECTION.writeGates,
  filter: { _id: { t: tenantId, o: object.id, g: gate } },
});

/** The tenant's catalogue counter (layout.ts, counters). */
export const catalogueCounterRef = (tenantId: string): DocumentRef => ({
  collection: COLLECTION.counters,
  filter: { _id: { t: tenantId, k: "catalogue" } },
});

/**
 * Every document `write` writes that a conflicting write writes too: the documents its own
 * operation writes (a deleted record) and the guard documents it adds.
 */
function documentsWritten(write: GuardedWrite): DocumentRef[] {
  switch (write.kind) {
    case "deleteRecord":
      return [
        recordRef(write.tenantId, write.object, write.uid),
        gateRef(write.tenantId, write.object, gateOf(write.uid)),
      ];
    case "writeRecord":
      return [
        recordRef(write.tenantId, write.object, write.uid),
        gateRef(write.tenantId, write.object, gateOf(write.uid)),
        ...write.references.map((target) => recordRef(write.tenantId, target.object, target.uid)),
      ];
    case "changeCatalogue":
      return [
        catalogueCounterRef(write.tenantId),
        ...write.objects.flatMap((object) =>
          Array.from({ length: GATES }, (_, gate) => gateRef(write.tenantId, object, gate)),
        ),
      ];
  }
}

/**
 * The guard updates `write` adds to what its own operation writes: the gate and the referred
 * records' guard counts of a record write, the gate of a delete, the gates of a catalogue change
 * (its counter is written by bumpCatalogueVersion). A reference to the record itself adds nothing:
 * the write is that record's already.
 */
export function guardUpdates(write: GuardedWrite): GuardUpdate[] {
  const inc =
    (field: string, upsert: boolean) =>
    (ref: DocumentRef): GuardUpdate => ({
      ...ref,
      update: { $inc: { [field]: 1 } },
      upsert,
    });
  switch (write.kind) {
    case "deleteRecord":
      return [inc("n", true)(gateRef(write.tenantId, write.object, gateOf(write.uid)))];
    case "writeRecord": {
      const self = (target: { object: PlannedObject; uid: string }) =>
        target.object.id === write.object.id && target.uid === write.uid;
      return [
        inc("n", true)(gateRef(write.tenantId, write.object, gateOf(write.uid))),
        // Not upserted: a referred record that is gone is the reference check's to report, not a guard's to create.
        ...write.references
          .filter((target) => !self(target))
          .map((target) => inc("w", false)(recordRef(write.tenantId, target.object, target.uid))),
      ];
    }
    case "changeCatalogue":
      return documentsWritten(write).slice(1).map(inc("n", true));
  }
}

const sameDocument = (a: DocumentRef, b: DocumentRef) =>
  a.collection === b.collection && JSON.stringify(a.filter) === JSON.stringify(b.filter);

/** The documents both writes write: where the second of two concurrent ones meets a write conflict. */
export function conflictingDocuments(a: GuardedWrite, b: GuardedWrite): DocumentRef[] {
  const theirs = documentsWritten(b);
  return documentsWritten(a).filter((mine) => theirs.some((other) => sameDocument(mine, other)));
}
