/**
 * An operation's input → record values by field name: only members the caller may write, references
 * resolved to the UIDs they name (an idAlias defined earlier in the write stands for its record's
 * UID, for its own object only). Whether that record exists is the store's check, in the write
 * itself (apply-operation.ts names its error by the input's member). Throws typed errors naming
 * the input's members.
 */
import {
  type AppError,
  type ErrorDetail,
  ReferenceNotFoundError,
  UniqueViolationError,
  UnknownIdAliasError,
  ValidationError,
} from "../../common/errors.ts";
import type { FieldDef, ObjectDef } from "../model/catalogue.ts";
import { memberName } from "../model/member-name.ts";
import type { FieldValue, RecordValues } from "../model/record-values.ts";
import { isUid } from "../model/uid.ts";
import type { WriteState } from "./write-state.ts";

/** Each object's fields by member name, built once per definition (a catalogue's objects are never changed, only replaced). */
const membersOf = new WeakMap<ObjectDef, Map<string, FieldDef>>();
function fieldsByMember(object: ObjectDef): Map<string, FieldDef> {
  let fields = membersOf.get(object);
  if (!fields) {
    fields = new Map(object.fields.map((field) => [memberName(field), field]));
    membersOf.set(object, fields);
  }
  return fields;
}

/** An operation's input (member names, aliases allowed in references) → values by field name, references resolved. */
export function toValues(state: WriteState, object: ObjectDef, input: Record<string, unknown>): RecordValues {
  assertWritable(object, input);
  const values: RecordValues = {};
  for (const field of object.fields) {
    const member = memberName(field);
    if (!(member in input)) continue;
    const value = (input[member] ?? null) as FieldValue;
    values[field.name] =
      field.type === "reference" && value !== null ? resolveReference(state, field, String(value)) : value;
  }
  return values;
}

/**
 * @throws ValidationError for input members the caller may not write: read-only fields (generated,
 * derived, counted: the engine sets them), system fields, and names that are no member of `object`.
 */
function assertWritable(object: ObjectDef, input: Record<string, unknown>): void {
  const problems: ErrorDetail[] = [];
  const fields = fieldsByMember(object);
  for (const member of Object.keys(input)) {
    const field = fields.get(member);
    if (!field) problems.push({ path: member, message: `is not a field of ${object.name}` });
    else if (field.readOnly || field.system) problems.push({ path: member, message: "is read-only" });
  }
  if (problems.length > 0)
    throw new ValidationError(
      `invalid ${object.name}: ${problems.map((p) => `${p.path} ${p.message}`).join("; ")}`,
      problems,
    );
}

function resolveReference(state: WriteState, field: FieldDef, value: string): string {
  const target = state.catalogue.objects.find((object) => object.name === field.referenceTo) as ObjectDef;
  const member = memberName(field);
  return uidFor(
    state,
    target,
    value,
    (message) =>
      new ReferenceNotFoundError(`${field.objectName}.${member}: ${message}`, [{ path: member, message }]),
  );
}

/** The error for an idAlias of another object given as an operation's `UID`. */
export const uidMismatch = (message: string) =>
  new ValidationError(`UID: ${message}`, [{ path: "UID", message }]);

/**
 * The UID `value` stands for as a record of `object`: the UID of an idAlias defined earlier, or
 * `value` itself when it is a UID (whether that record exists is the caller's question).
 * @throws UnknownIdAliasError for neither; `mismatch(message)` for an idAlias of a record of another object.
 */
export function uidFor(
  state: WriteState,
  object: ObjectDef,
  value: string,
  mismatch: (message: string) => AppError,
): string {
  const aliased = state.aliases.get(value);
  if (aliased && aliased.objectName !== object.name)
    throw mismatch(
      `idAlias '${value}' names a record of ${aliased.objectName}; a record of ${object.name} is expected here`,
    );
  if (aliased) return aliased.uid;
  if (!isUid(value))
    throw new UnknownIdAliasError(
      `'${value}' is neither a UID nor an idAlias defined earlier in this mutation`,
    );
  return value;
}

/**
 * `uid`, chosen by the caller for a new record of `object` (a user's record has the user's id).
 * @throws ValidationError when it is no UID; UniqueViolationError when a record of `object` has it.
 */
export async function chosenUid(state: WriteState, object: ObjectDef, uid: string): Promise<string> {
  if (!isUid(uid))
    throw new ValidationError(`UID: '${uid}' is not a UID`, [{ path: "UID", message: "is not a UID" }]);
  if (await loadOne(state, object, uid))
    throw new UniqueViolationError(`${object.name}.UID must be unique: another record has '${uid}'`);
  return uid;
}

/** The record `uid` of `object` as the write sees it; null when there is none. */
export const loadOne = async (state: WriteState, object: ObjectDef, uid: string) =>
  (await state.tx.findRecords(state.context.tenantId, object, [uid]))[0] ?? null;
