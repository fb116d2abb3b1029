/**
 * What a record write of the MongoDB engine hands the driver, as data: the
 * driver writes of a plan (record-write-plan.ts, record-import-plan.ts), in
 * order, each saying which typed error its failure means, and the functions
 * that say it (pure: the error the driver threw, or what a probe read, in;
 * the port's error out).
 */
import type { Document } from "mongodb";
import { ReferenceNotFoundError, UniqueViolationError } from "../../../../common/errors.ts";
import { duplicateKeyIndex } from "../../../../common/store/mongodb/driver-errors.ts";
import type { FieldDef, ObjectDef } from "../../../model/catalogue.ts";
import type { FieldValue } from "../../../model/record-values.ts";
import type { PlannedObject } from "../write-skew.ts";

/** The value a document of a write holds for a unique field, should the write meet a duplicate key. */
export interface UniqueClash {
  field: FieldDef;
  value: FieldValue;
}

/** A reference a write sets: its field and the UID it names. */
export interface Reference {
  field: FieldDef;
  uid: string;
}

/** A reference with its target object looked up: null when the tenant has no object of that name. */
export interface ResolvedReference extends Reference {
  target: PlannedObject | null;
}

/** A reference and the record it names, as a targets read finds it. */
export interface TargetRead {
  reference: Reference;
  o: string;
  u: string;
}

/** One driver write (or read a write depends on), in the order the plan lists them. */
export type PlannedWrite =
  | {
      kind: "insert";
      collection: string;
      documents: Document[];
      /** Per document: the unique value a duplicate key on it means. */
      clashes: readonly UniqueClash[];
    }
  | {
      kind: "update";
      collection: string;
      filter: Document;
      update: Document;
      upsert: boolean;
    }
  | {
      /**
       * A read of the records a write refers to (`filter`: their `{t, o, u}`), in its transaction:
       * a reference whose target it does not find is the ReferenceNotFoundError of its field,
       * thrown before anything is written (the error is the engine's own, so the transaction goes
       * on). The other half of the check is the reference gate the write then increments
       * (write-skew.ts), which a delete of the target writes too.
       */
      kind: "targets";
      collection: string;
      filter: Document;
      /** Each reference, in field order, with the object id (`o`) and UID (`u`) of the record it names. */
      targets: readonly TargetRead[];
    }
  | {
      /**
       * A read of the keys a write is about to take (`filter` on their `_id`s): one held by another
       * record than `holder` is the UniqueViolationError of its field (`clashes`, by field), thrown
       * before anything is written, so the transaction goes on (a duplicate key would abort it).
       */
      kind: "probe";
      collection: string;
      filter: Document;
      holder: string;
      clashes: readonly UniqueClash[];
    }
  | {
      /** Updates of one collection sent together (one bulk write, in order). */
      kind: "updates";
      collection: string;
      updates: { filter: Document; update: Document; upsert: boolean }[];
    }
  | { kind: "delete"; collection: string; filter: Document };

/** The write of the record document itself, which reads its keyed values as they were. */
export interface RecordStep {
  collection: string;
  filter: Document;
  /** The update; none for a delete. */
  update: Document | null;
  /** The fields to read back: the keyed values. */
  projection: Document;
  /** What a duplicate key on the record means (a UID taken); none for a delete. */
  clash: UniqueClash | null;
}

/** An update or a delete: the writes before the record's, the record's, and those that follow from what it held. */
export interface TwoStepPlan {
  before: PlannedWrite[];
  record: RecordStep;
  /** The writes after the record step, given the record as it was before (null: there was none, nothing follows). */
  after(previous: Document | null): PlannedWrite[];
}

/** A reference naming no record of its target, as the other engines word it. */
export function referenceNotFound({ field, uid }: Reference): ReferenceNotFoundError {
  const message = `no ${field.referenceTo} record with UID '${uid}'`;
  return new ReferenceNotFoundError(`${field.objectName}.${field.name}: ${message}`, [
    { path: field.name, message },
  ]);
}

/** A unique value another record holds, as the other engines word it. */
function uniqueViolation({ field, value }: UniqueClash): UniqueViolationError {
  return new UniqueViolationError(
    `${field.objectName}.${field.name} must be unique: another record has ${JSON.stringify(value)}`,
  );
}

/**
 * The error a failed write means: a UniqueViolationError when it met a duplicate key on a document
 * the plan gave a clash (`clashes`, by the document's index in the write), else `error` as it was
 * (a write conflict, above all, must reach the unit of work as it is, to be run again).
 */
export function writeFailure(error: unknown, clashes: readonly (UniqueClash | null)[]): unknown {
  const index = duplicateKeyIndex(error);
  const clash = index === null ? null : (clashes[index] ?? null);
  return clash ? uniqueViolation(clash) : error;
}

/** The error the keys a probe found mean (as read: `_id` and `u`): a UniqueViolationError, or null when none is another record's. */
export function probeFailure(
  found: readonly Document[],
  probe: Extract<PlannedWrite, { kind: "probe" }>,
): UniqueViolationError | null {
  for (const key of found) {
    if (key.u === probe.holder) continue;
    const clash = probe.clashes.find((candidate) => candidate.field.id === key._id?.f);
    if (clash) return uniqueViolation(clash);
  }
  return null;
}

/** An object as the write-skew plan names it. */
export const plannedObject = (object: ObjectDef): PlannedObject => ({ id: object.id, custom: object.custom });

/** The error a targets read means (the records found, as read: `o` and `u`): the first reference whose target is not among them, or null. */
export function missingTarget(
  found: readonly Document[],
  read: Extract<PlannedWrite, { kind: "targets" }>,
): ReferenceNotFoundError | null {
  const held = new Set(found.map((record) => JSON.stringify([record.o, record.u])));
  const missing = read.targets.find((target) => !held.has(JSON.stringify([target.o, target.u])));
  return missing ? referenceNotFound(missing.reference) : null;
}
