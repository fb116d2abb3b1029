/**
 * Paths of a filter → the fields they read. A path follows references
 * (`Region.Name`); its last name may be any field, a reference (`Region`,
 * read as the target's UID) or a reference's `<Name>Id` alias (`RegionId`).
 * In extended filters a path starts with `Current.` or `Previous.`, or is the
 * bare `Operation`.
 */
import type { SourcePosition } from "../../common/errors.ts";
import { UnknownFieldError } from "../../common/errors.ts";
import { type Catalogue, type FieldDef, findField, findObject, type ObjectDef } from "../model/catalogue.ts";
import type { Name, PathNode } from "./ast.ts";
import type { FieldOperand, FilterMode, Hop, Subject } from "./checked-filter.ts";
import { closestName } from "./closest-name.ts";
import { VALUE_CLASS } from "./coerce-literal.ts";
import { describePosition, filterError, quote } from "./source-text.ts";

/** What paths are resolved against. */
export interface PathScope {
  object: ObjectDef;
  catalogue: Catalogue;
  mode: FilterMode;
}

const EXTENDED_ROOTS = ["Current", "Previous", "Operation"];

/** Every name a filter may use on `object`: its fields, plus `<Name>Id` for each reference. */
function addressableNames(object: ObjectDef): string[] {
  return object.fields.flatMap((field) =>
    field.type === "reference" ? [field.name, `${field.name}Id`] : [field.name],
  );
}

function unknownName(
  objectName: string,
  name: Name,
  validNames: string[],
  suggestion: string | null,
): UnknownFieldError {
  const hint = suggestion === null ? "" : `; did you mean '${suggestion}'?`;
  const message = `unknown field ${quote(name.name)} on ${objectName} at ${describePosition(name.position)}${hint}`;
  return new UnknownFieldError(message, objectName, validNames, suggestion, name.position);
}

function unknownField(object: ObjectDef, name: Name): UnknownFieldError {
  const validNames = addressableNames(object);
  return unknownName(object.name, name, validNames, closestName(name.name, validNames));
}

/** The field `name` ends a path on: exact name first, then `<Reference>Id`. */
function terminalField(object: ObjectDef, name: Name): FieldDef {
  const exact = findField(object, name.name);
  if (exact) return exact;
  const reference = name.name.endsWith("Id") ? findField(object, name.name.slice(0, -2)) : undefined;
  if (reference?.type === "reference") return reference;
  throw unknownField(object, name);
}

function follow(object: ObjectDef, name: Name, next: SourcePosition, catalogue: Catalogue): Hop {
  const reference = findField(object, name.name);
  if (!reference) throw unknownField(object, name);
  const target = reference.referenceTo === null ? undefined : findObject(catalogue, reference.referenceTo);
  if (reference.type !== "reference" || !target) {
    const problem = `${object.name}.${reference.name} is not a reference, so '.' cannot follow it`;
    throw filterError(problem, next, "a reference field before '.'", quote(reference.name));
  }
  return { reference, target };
}

/** `names` resolved from `object` through references, starting at `root`. */
export function resolveFieldPath(
  names: Name[],
  object: ObjectDef,
  catalogue: Catalogue,
  root: FieldOperand["root"],
): FieldOperand {
  const hops: Hop[] = [];
  let current = object;
  for (let i = 0; i < names.length - 1; i++) {
    const hop = follow(current, names[i] as Name, (names[i + 1] as Name).position, catalogue);
    hops.push(hop);
    current = hop.target;
  }
  const field = terminalField(current, names[names.length - 1] as Name);
  return { kind: "field", root, hops, field, valueClass: VALUE_CLASS[field.type] };
}

function resolveExtended(path: PathNode, scope: PathScope): Subject {
  const [first, ...rest] = path.segments as [Name, ...Name[]];
  const root = first.name.toLowerCase();
  if (root === "operation" && rest.length === 0) return { kind: "operation", valueClass: "text" };
  if ((root === "current" || root === "previous") && rest.length > 0) {
    return resolveFieldPath(rest, scope.object, scope.catalogue, root);
  }
  if (root === "current" || root === "previous") {
    throw filterError(
      `${first.name} needs a field after it`,
      first.position,
      `'${first.name}.<field>'`,
      quote(first.name),
    );
  }
  const asField = addressableNames(scope.object).includes(first.name) ? `Current.${first.name}` : null;
  throw unknownName(
    scope.object.name,
    first,
    EXTENDED_ROOTS,
    asField ?? closestName(first.name, EXTENDED_ROOTS),
  );
}

/**
 * The subject a path reads, in `scope`.
 * @throws UnknownFieldError for a name the object does not have (with the valid names and the closest one).
 * @throws FilterParseError for `.` after a field that is not a reference, or a bare `Current`/`Previous`.
 */
export function resolvePath(path: PathNode, scope: PathScope): Subject {
  if (scope.mode === "extended") return resolveExtended(path, scope);
  return resolveFieldPath(path.segments, scope.object, scope.catalogue, "record");
}

/** `Region.Name (string)`: how messages name a subject. */
export function describeSubject(path: PathNode, subject: Subject): string {
  const written = path.segments.map((segment) => segment.name).join(".");
  return subject.kind === "operation" ? "Operation" : `${written} (${subject.field.type})`;
}
