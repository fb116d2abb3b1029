/**
 * What the standard objects do beyond their fields' definitions (docs/STANDARD_OBJECTS.md), as
 * one table keyed by object name: names generated from a sequence, fields derived from others, the
 * order of two fields of a record, a count a parent keeps of its children. The record-write engine
 * looks an object up here (`behavioursOf`) and applies what it finds; nothing else in the write
 * path branches on an object's name. Custom objects have none. Pure: values in, values out.
 */
import type { ErrorDetail } from "../../common/errors.ts";
import type { ObjectDef } from "../model/catalogue.ts";
import type { ChangeEntry, FieldValue, RecordValues } from "../model/record-values.ts";

/** `field` of a new record is `prefix` + the next value of the tenant's `sequence`, zero-padded to `digits`. */
export interface GeneratedName {
  field: string;
  prefix: string;
  /** The store's sequence name; changing it would start the numbers again. */
  sequence: string;
  digits: number;
}

/** `after` must not come before `before` (strictly after when `strict`), when both are set. */
export interface FieldOrder {
  before: string;
  after: string;
  strict: boolean;
}

/**
 * The parent a record's `reference` points at keeps, in its field `counter`, how many of its
 * children `counts`; kept current inside the write that changes the children, with the parent's own
 * UPDATE change entry.
 */
export interface ParentCounter {
  reference: string;
  counter: string;
  counts: (record: RecordValues) => boolean;
}

export interface ObjectBehaviours {
  generatedName?: GeneratedName;
  /** Read-only fields computed from the record's other values on every insert and update. */
  derived?: Readonly<Record<string, (record: RecordValues) => FieldValue>>;
  fieldOrder?: readonly FieldOrder[];
  countedBy?: ParentCounter;
}

/** "Ada Lovelace": the non-empty names, in order; null when there are none. */
const fullName = (record: RecordValues): FieldValue =>
  [record.FirstName, record.LastName].filter((part) => typeof part === "string" && part !== "").join(" ") ||
  null;

const startToEnd: FieldOrder = { before: "Start", after: "End", strict: false };

/** The standard objects' behaviours; an object absent here has none. */
export const STANDARD_BEHAVIOURS: Readonly<Record<string, ObjectBehaviours>> = {
  Contacts: { derived: { FullName: fullName } },
  Jobs: {
    generatedName: { field: "Name", prefix: "JOB-", sequence: "Jobs.Name", digits: 4 },
    fieldOrder: [startToEnd],
  },
  JobAllocations: {
    generatedName: { field: "Name", prefix: "JA-", sequence: "JobAllocations.Name", digits: 4 },
    fieldOrder: [startToEnd],
    countedBy: {
      reference: "Job",
      counter: "JobAllocationCount",
      counts: (allocation) => allocation.Status !== "Deleted",
    },
  },
  Availabilities: { fieldOrder: [{ before: "Start", after: "Finish", strict: true }] },
};

const NONE: ObjectBehaviours = {};

/** The behaviours of `object`: its row of the table when it is a standard object, none otherwise. */
export function behavioursOf(object: ObjectDef): ObjectBehaviours {
  if (object.custom || !Object.hasOwn(STANDARD_BEHAVIOURS, object.name)) return NONE;
  return STANDARD_BEHAVIOURS[object.name] ?? NONE;
}

/** The generated name for the sequence's `value` (`JOB-0007`; more digits when it outgrows them). */
export const generatedNameOf = (generated: GeneratedName, value: number): string =>
  `${generated.prefix}${String(value).padStart(generated.digits, "0")}`;

/** Sets the derived fields of `record` (the full record to be stored) from its other values. */
export function deriveFields(behaviours: ObjectBehaviours, record: RecordValues): void {
  for (const [field, derive] of Object.entries(behaviours.derived ?? {})) record[field] = derive(record);
}

/** Problems of `record`'s field order, at the later field. */
export function checkFieldOrder(behaviours: ObjectBehaviours, record: RecordValues): ErrorDetail[] {
  return (behaviours.fieldOrder ?? []).flatMap(({ before, after, strict }) => {
    const start = record[before];
    const end = record[after];
    if (typeof start !== "number" || typeof end !== "number") return [];
    const bad = strict ? end <= start : end < start;
    return bad ? [{ path: after, message: `must be ${strict ? "after" : "at or after"} ${before}` }] : [];
  });
}

/** How each parent's count changes by `entries` (changes of the counted children): parent UID → delta, zeros left out. */
export function counterDeltas(counter: ParentCounter, entries: readonly ChangeEntry[]): Map<string, number> {
  const deltas = new Map<string, number>();
  const add = (record: RecordValues | null, delta: number) => {
    const parent = record?.[counter.reference];
    if (record && typeof parent === "string" && counter.counts(record))
      deltas.set(parent, (deltas.get(parent) ?? 0) + delta);
  };
  for (const entry of entries) {
    add(entry.before, -1);
    add(entry.after, +1);
  }
  for (const [parent, delta] of deltas) if (delta === 0) deltas.delete(parent);
  return deltas;
}
