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
 * - delete vs referring write: deleting record P (after counting no record
 *   that refers to it) and writing a record W whose reference names P (after
 *   finding P, a read in W's transaction). W increments ONE of P's GATES
 *   reference gates, the one of W's UID (upserted); the delete increments
 *   ALL of them (upserted) and then deletes them. Common document: that
 *   reference gate. Gates, not P's own document, so that writes referring to
 *   one popular record (the Users record every write of one user names in
 *   CreatedBy and LastModifiedBy, a Region most Jobs point at) conflict with
 *   each other only when their UIDs share a gate, not always. A gate neither
 *   side's snapshot holds is still common: both insert its `_id` (the
 *   delete's insert followed by its delete), and the second to write that
 *   index key meets the first's write, uncommitted or committed after its
 *   snapshot, as a write conflict.
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
 * Both kinds of gate are picked by the same function of the writing record's
 * UID, so two writes of one object whose reference gates coincide have
 * coinciding object gates already: the reference gates add no conflict
 * between writes of one object, and 1 in GATES between writes of two.
 */
import { COLLECTION } from "../../../common/store/mongodb/layout.ts";

/**
 * Gates per object and per referenced record: a write picks one of each; a catalogue change takes
 * all of an object's, a delete all of its record's. 64: two concurrent writes meet in 1 of 64
 * pairs, and a delete's cost stays one bulk of 64 small upserts and one delete of them.
 */
export const GATES = 64;

/** An object as the plan needs it: its id (records' `o`) and which collection holds its records. */
export interface PlannedObject {
  id: string;
  custom: boolean;
}

/** A write of the port that takes part in a check-then-act pair. */
export type GuardedWrite =
  | {
      /** A delete of record `uid`, or an update changing its UID: either way no record is `uid` after it. */
      kind: "deleteRecord";
      tenantId: string;
      object: PlannedObject;
      uid: string;
    }
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

/** The gate of `uid`'s writes, in its object and in the records it refers to: FNV-1a of the UID, so every process picks the same. */
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

/** The `_id` of reference gate `gate` of record `uid` (layout.ts, reference_gates: fields in this order). */
const referenceGateId = (tenantId: string, object: PlannedObject, uid: string, gate: number) => ({
  t: tenantId,
  o: object.id,
  u: uid,
  g: gate,
});

const referenceGateRef = (
  tenantId: string,
  object: PlannedObject,
  uid: string,
  gate: number,
): DocumentRef => ({
  collection: COLLECTION.referenceGates,
  filter: { _id: referenceGateId(tenantId, object, uid, gate) },
});

const allGates = () => Array.from({ length: GATES }, (_, gate) => gate);

/** The tenant's catalogue counter (layout.ts, counters). */
export const catalogueCounterRef = (tenantId: string): DocumentRef => ({
  collection: COLLECTION.counters,
  filter: { _id: { t: tenantId, k: "catalogue" } },
});

type Target = { object: PlannedObject; uid: string };

/** The records a write refers to, each once, but the record itself: the write is that record's already. */
function targetsOf(write: Extract<GuardedWrite, { kind: "writeRecord" }>): Target[] {
  const seen = new Set<string>();
  const targets: Target[] = [];
  for (const target of write.references) {
    if (target.object.id === write.object.id && target.uid === write.uid) continue;
    const key = JSON.stringify([target.object.id, target.uid]);
    if (seen.has(key)) continue;
    seen.add(key);
    targets.push(target);
  }
  return targets;
}

/**
 * Every document `write` writes that a conflicting write writes too: the documents its own
 * operation writes (a deleted record) and the guard documents it adds.
 */
function documentsWritten(write: GuardedWrite): DocumentRef[] {
  const own =
    write.kind === "changeCatalogue"
      ? catalogueCounterRef(write.tenantId)
      : recordRef(write.tenantId, write.object, write.uid);
  return [own, ...guardUpdates(write).map(refOf)];
}

const refOf = ({ collection, filter }: GuardUpdate): DocumentRef => ({ collection, filter });

const increment = (ref: DocumentRef): GuardUpdate => ({ ...ref, update: { $inc: { n: 1 } }, upsert: true });

/**
 * The guard updates `write` adds to what its own operation writes, every one an upserted increment
 * (an update that changes nothing is no write, and conflicts with nothing):
 * - a record write: its object gate, then the reference gate of its UID in each record it refers
 *   to (each once; a reference to itself adds nothing). The session reads each such record in the
 *   same transaction first (a missing one is a ReferenceNotFoundError, before any gate is written);
 * - a delete (or a UID change): its object gate, then all GATES reference gates of the record,
 *   which `releasedGates` then deletes;
 * - a catalogue change: all GATES gates of each object it alters (its counter is written by
 *   bumpCatalogueVersion).
 */
export function guardUpdates(write: GuardedWrite): GuardUpdate[] {
  const { tenantId } = write;
  switch (write.kind) {
    case "deleteRecord":
      return [
        gateRef(tenantId, write.object, gateOf(write.uid)),
        ...allGates().map((gate) => referenceGateRef(tenantId, write.object, write.uid, gate)),
      ].map(increment);
    case "writeRecord": {
      const gate = gateOf(write.uid);
      return [
        gateRef(tenantId, write.object, gate),
        ...targetsOf(write).map((target) => referenceGateRef(tenantId, target.object, target.uid, gate)),
      ].map(increment);
    }
    case "changeCatalogue":
      return write.objects.flatMap((object) =>
        allGates()
          .map((gate) => gateRef(tenantId, object, gate))
          .map(increment),
      );
  }
}

/**
 * The reference gates a delete of record `uid` (or a change of its UID) deletes after its guard
 * updates wrote them: no gate outlives its record, and a record made later with the same UID
 * starts with none.
 */
export function releasedGates(tenantId: string, object: PlannedObject, uid: string): DocumentRef {
  return {
    collection: COLLECTION.referenceGates,
    filter: { _id: { $in: allGates().map((gate) => referenceGateId(tenantId, object, uid, gate)) } },
  };
}

const sameDocument = (a: DocumentRef, b: DocumentRef) =>
  a.collection === b.collection && JSON.stringify(a.filter) === JSON.stringify(b.filter);

/** The documents both writes write: where the second of two concurrent ones meets a write conflict. */
export function conflictingDocuments(a: GuardedWrite, b: GuardedWrite): DocumentRef[] {
  const theirs = documentsWritten(b);
  return documentsWritten(a).filter((mine) => theirs.some((other) => sameDocument(mine, other)));
}
