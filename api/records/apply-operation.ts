/**
 * One record operation inside its write's unit of work: input → checked
 * record values → writes and change entries. Throws typed errors; the caller
 * rolls the whole write back.
 */
import {
  InvalidKeyFieldError,
  NotFoundError,
  ReferenceNotFoundError,
  UniqueViolationError,
  ValidationError,
} from "../../common/errors.ts";
import type { FieldDef, ObjectDef } from "../model/catalogue.ts";
import { defaultRecordValue } from "../model/field-values.ts";
import { memberName } from "../model/member-name.ts";
import { type ChangeEntry, type RecordValues, sameValue } from "../model/record-values.ts";
import type { RecordOperation } from "./record-operation.ts";
import { chosenUid, loadOne, toValues, uidFor, uidMismatch } from "./resolve-input.ts";
import { behavioursOf, checkFieldOrder, deriveFields, generatedNameOf } from "./standard-behaviours.ts";
import { checkFieldValues, missingRequired } from "./validate-input.ts";
import type { WriteState } from "./write-state.ts";

/** Runs one operation; returns the UID it touched (null for a delete of nothing). */
export async function applyOperation(state: WriteState, op: RecordOperation): Promise<string | null> {
  switch (op.kind) {
    case "insert": {
      const uid = op.uid === undefined ? Bun.randomUUIDv7() : await chosenUid(state, op.object, op.uid);
      return register(
        state,
        op,
        await insert(state, op.object, toValues(state, op.object, op.input ?? {}), uid),
      );
    }
    case "update": {
      const uid = uidFor(state, op.object, String(op.input?.UID ?? ""), uidMismatch);
      const existing = await loadOne(state, op.object, uid);
      if (!existing) throw new NotFoundError(`no ${op.object.name} record with UID '${uid}'`);
      const { UID: _uid, ...given } = op.input ?? {};
      return update(state, op.object, existing, toValues(state, op.object, given));
    }
    case "upsert":
      return register(state, op, await upsert(state, op));
    case "delete":
      return remove(state, op.object, uidFor(state, op.object, op.uid ?? "", uidMismatch));
  }
}

/**
 * A store write whose ReferenceNotFoundError names the field by the input's member (`RegionId`, not
 * `Region`): the store checks that a reference names a record, in the write itself (the record an
 * idAlias stands for may have been deleted by an earlier operation of the mutation too).
 */
async function named<T>(object: ObjectDef, write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (!(error instanceof ReferenceNotFoundError)) throw error;
    const details = (error.details ?? []).map((detail) => {
      const field = object.fields.find((candidate) => candidate.name === detail.path);
      return field ? { ...detail, path: memberName(field) } : detail;
    });
    const [first] = details;
    throw new ReferenceNotFoundError(
      first ? `${object.name}.${first.path}: ${first.message}` : error.message,
      details,
    );
  }
}

function register(state: WriteState, op: RecordOperation, uid: string): string {
  if (op.idAlias) {
    if (state.aliases.has(op.idAlias))
      throw new ValidationError(`idAlias '${op.idAlias}' is defined twice in this mutation`);
    state.aliases.set(op.idAlias, { uid, objectName: op.object.name });
  }
  return uid;
}

async function upsert(state: WriteState, op: RecordOperation): Promise<string> {
  const keys = op.object.fields.filter((field) => field.unique && !field.readOnly && !field.system);
  const key = keys.find((field) => field.name === op.keyField);
  if (!key) {
    const valid = keys.map((field) => field.name).join(", ") || "none: add a unique field first";
    throw new InvalidKeyFieldError(
      `'${op.keyField}' is not an upsert key of ${op.object.name}; valid keys: ${valid}`,
    );
  }
  const given = toValues(state, op.object, op.input ?? {});
  const value = given[key.name];
  if (value === undefined || value === null)
    throw new ValidationError(`the input must set the key field ${key.name}`, [
      { path: key.name, message: "is required for the upsert" },
    ]);
  const tried = await insertFirst(state, op.object, given, key);
  if (tried && "inserted" in tried) return tried.inserted;
  const existing =
    tried?.holder ?? (await state.tx.findRecordByValue(state.context.tenantId, op.object, key, value));
  // Its value was just found free (insert) or the record's own (update) in this unit of work: not looked up again.
  return existing
    ? update(state, op.object, existing, given)
    : insert(state, op.object, given, undefined, key);
}

/**
 * An upsert's insert tried before any read of its key (on PostgreSQL, a read of an absent key
 * locks its whole index page under SERIALIZABLE, and concurrent upserts of new neighbouring keys
 * then fail to serialize), where that cannot change the outcome: the object draws no generated
 * name (an update would have drawn a number), the key is the only unique value given (another's
 * check would count the record the upsert updates), and `given` makes a valid new record (else the
 * record found answers, or the insert's own errors). The UID inserted, or the record holding the
 * key (to update); null when this does not apply: the caller looks the key up.
 */
async function insertFirst(
  state: WriteState,
  object: ObjectDef,
  given: RecordValues,
  key: FieldDef,
): Promise<{ inserted: string } | { holder: RecordValues } | null> {
  const behaviours = behavioursOf(object);
  if (behaviours.generatedName) return null;
  const uniques = object.fields.filter((f) => f.unique && !f.system && f !== key);
  if (uniques.some((field) => (given[field.name] ?? null) !== null)) return null;
  const record = newRecord(state, object, given, Bun.randomUUIDv7());
  deriveFields(behaviours, record);
  if (insertProblems(object, given, record).length > 0) return null;
  const holder = await named(object, state.tx.insertUnlessTaken(state.context.tenantId, object, record, key));
  if (holder) return { holder };
  state.changes.push(change(state, object, "INSERT", record.UID as string, null, record));
  return { inserted: record.UID as string };
}

/** A new record of `given` values: the others' defaults, its UID, times and users (no generated name yet). */
function newRecord(state: WriteState, object: ObjectDef, given: RecordValues, uid: string): RecordValues {
  const { userId, now } = state.context;
  const record: RecordValues = {};
  for (const field of object.fields)
    record[field.name] = field.name in given ? (given[field.name] ?? null) : defaultRecordValue(field);
  return Object.assign(record, {
    UID: uid,
    CreatedDate: now,
    LastModifiedDate: now,
    CreatedBy: userId,
    LastModifiedBy: userId,
  });
}

/** What makes `record` (of `given` values) no valid new record of `object`. */
const insertProblems = (object: ObjectDef, given: RecordValues, record: RecordValues) => [
  ...checkFieldValues(object, given),
  ...missingRequired(object, record),
  ...checkFieldOrder(behavioursOf(object), record),
];

/** Inserts a record of `given` values; `checkedFree` is a unique field whose value the caller found free. */
async function insert(
  state: WriteState,
  object: ObjectDef,
  given: RecordValues,
  uid: string = Bun.randomUUIDv7(),
  checkedFree?: FieldDef,
): Promise<string> {
  const { tenantId } = state.context;
  const record = newRecord(state, object, given, uid);
  const behaviours = behavioursOf(object);
  const generated = behaviours.generatedName;
  if (generated)
    record[generated.field] = generatedNameOf(
      generated,
      await state.tx.nextSequenceValue(tenantId, generated.sequence),
    );
  deriveFields(behaviours, record);
  assertValid(object, given, insertProblems(object, given, record));
  await assertUnique(state, object, record, given, null, checkedFree);
  await named(object, state.tx.insertRecord(tenantId, object, record));
  state.changes.push(change(state, object, "INSERT", record.UID as string, null, record));
  return record.UID as string;
}

export async function update(
  state: WriteState,
  object: ObjectDef,
  existing: RecordValues,
  given: RecordValues,
): Promise<string> {
  const { tenantId, userId, now } = state.context;
  const record: RecordValues = { ...existing, ...given };
  const behaviours = behavioursOf(object);
  deriveFields(behaviours, record);
  const cleared = missingRequired(object, record).filter((problem) => problem.path in given);
  assertValid(object, given, [
    ...checkFieldValues(object, given),
    ...cleared,
    ...checkFieldOrder(behaviours, record),
  ]);
  await assertUnique(state, object, record, given, existing);
  const changed = object.fields.filter(
    (field) => !sameValue(existing[field.name] ?? null, record[field.name] ?? null),
  );
  // A matched record is always touched; only a change of its data is a change event.
  Object.assign(record, {
    LastModifiedDate: Math.max(now, (existing.LastModifiedDate as number) + 1),
    LastModifiedBy: userId,
  });
  const writes: RecordValues = { LastModifiedDate: record.LastModifiedDate ?? null, LastModifiedBy: userId };
  for (const field of changed) writes[field.name] = record[field.name] ?? null;
  await named(object, state.tx.updateRecord(tenantId, object, existing.UID as string, writes));
  if (changed.length > 0)
    state.changes.push(change(state, object, "UPDATE", existing.UID as string, existing, record));
  return existing.UID as string;
}

async function remove(state: WriteState, object: ObjectDef, uid: string): Promise<string | null> {
  const existing = await loadOne(state, object, uid);
  if (!existing) return null;
  for (const source of state.catalogue.objects) {
    for (const field of source.fields.filter((f) => f.referenceTo === object.name)) {
      const count = await state.tx.countReferencing(state.context.tenantId, source, field, uid);
      if (count > 0) {
        throw new ValidationError(
          `${object.name} ${uid} is still referenced by ${count} ${source.name} (${field.name}); delete or re-point them first`,
        );
      }
    }
  }
  await state.tx.deleteRecord(state.context.tenantId, object, uid);
  state.changes.push(change(state, object, "DELETE", uid, existing, null));
  return uid;
}

async function assertUnique(
  state: WriteState,
  object: ObjectDef,
  record: RecordValues,
  given: RecordValues,
  existing: RecordValues | null,
  checkedFree?: FieldDef,
) {
  for (const field of object.fields.filter((f) => f.unique && !f.system && f.name in given)) {
    if (field === checkedFree) continue;
    const value = record[field.name] ?? null;
    if (value === null) continue;
    // A value the record holds already is its own: no other record can hold it.
    if (existing && sameValue(existing[field.name] ?? null, value)) continue;
    const self = existing?.UID as string | undefined;
    if (await state.tx.findRecordByValue(state.context.tenantId, object, field, value, self)) {
      throw new UniqueViolationError(
        `${object.name}.${field.name} must be unique: another record has ${JSON.stringify(value)}`,
      );
    }
  }
}

/** @throws ValidationError listing `problems` (found by field name) at the input members the client wrote. */
function assertValid(
  object: ObjectDef,
  _given: RecordValues,
  problems: { path: string; message: string }[],
): void {
  if (problems.length === 0) return;
  const byMember = problems.map((problem) => {
    const field = object.fields.find((f) => f.name === problem.path);
    return field ? { ...problem, path: memberName(field) } : problem;
  });
  const summary = byMember.map((p) => `${p.path} ${p.message}`).join("; ");
  throw new ValidationError(`invalid ${object.name}: ${summary}`, byMember);
}

function change(
  state: WriteState,
  object: ObjectDef,
  operation: ChangeEntry["operation"],
  uid: string,
  before: RecordValues | null,
  after: RecordValues | null,
): ChangeEntry {
  const { tenantId, mutationId, now, requestId } = state.context;
  return {
    tenantId,
    objectName: object.name,
    operation,
    uid,
    before,
    after,
    mutationId,
    sequence: state.changes.length,
    committedAt: now,
    requestId: requestId ?? null,
  };
}
