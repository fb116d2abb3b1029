/**
 * The record fields a selection reads, so a store query fetches only those
 * columns: the fields selected, the reference behind a lookup, and always UID
 * (reverse lists and cursors key on it). Followed through fragments and inline
 * fragments; @skip/@include are ignored (reading a column too many is harmless).
 * Memoized per field node: documents are cached, so their nodes come back.
 */
import type { FieldNode, FragmentDefinitionNode, SelectionSetNode } from "graphql";
import type { FieldDef, ObjectDef } from "../../catalogue/catalogue.ts";
import type { JoinedLookup } from "../../store/store.ts";
import { names } from "../schema/naming.ts";

type Fragments = Record<string, FragmentDefinitionNode>;

/** The fields of `selectionSet` (of any alias), fragments spread out. */
function fieldsOf(selectionSet: SelectionSetNode | undefined, fragments: Fragments, into: FieldNode[] = []) {
  for (const selection of selectionSet?.selections ?? []) {
    if (selection.kind === "Field") into.push(selection);
    else if (selection.kind === "InlineFragment") fieldsOf(selection.selectionSet, fragments, into);
    else fieldsOf(fragments[selection.name.value]?.selectionSet, fragments, into);
  }
  return into;
}

/** The fields reached from `nodes` by following `path` (response-name agnostic: `edges`, then `node`). */
function fieldsAt(nodes: readonly FieldNode[], path: readonly string[], fragments: Fragments): FieldNode[] {
  let current = nodes.flatMap((node) => fieldsOf(node.selectionSet, fragments));
  for (const step of path) {
    current = current
      .filter((field) => field.name.value === step)
      .flatMap((field) => fieldsOf(field.selectionSet, fragments));
  }
  return current;
}

const memberMaps = new WeakMap<ObjectDef, Map<string, FieldDef>>();

/** GraphQL member name → the record field it reads (`FooId` and the lookup `Foo` both read `Foo`). */
function membersOf(object: ObjectDef): Map<string, FieldDef> {
  let members = memberMaps.get(object);
  if (!members) {
    members = new Map();
    for (const field of object.fields) {
      members.set(field.type === "reference" ? names.referenceId(field.name) : field.name, field);
      if (field.type === "reference") members.set(field.name, field);
    }
    memberMaps.set(object, members);
  }
  return members;
}

const memo = new WeakMap<FieldNode, Map<readonly string[], readonly FieldDef[]>>();

/**
 * The fields of `object` read under `nodes` at `path` (`[]` for the field's own selection,
 * `["edges", "node"]` for a connection). The same array comes back for the same nodes and path
 * array (a field node always selects on the same object, so the object needs no key).
 */
/** Paths into a selection, passed by identity (the memos key on the path array). */
export const OWN: readonly string[] = [];
export const EDGE_NODE: readonly string[] = ["edges", "node"];

const lookupMemo = new WeakMap<FieldNode, Map<readonly string[], readonly JoinedLookup[]>>();

/**
 * The to-one lookups selected under `nodes` at `path`, to be read with the records in one
 * statement: each reference of `object` selected as a lookup (`Region { Name }`, aliases merged),
 * with the target fields its selections read. Deeper levels still go through loaders.
 */
export function joinedLookups(
  object: ObjectDef,
  nodes: readonly FieldNode[],
  path: readonly string[],
  fragments: Fragments,
  targetOf: (reference: FieldDef) => ObjectDef,
): readonly JoinedLookup[] {
  const first = nodes[0];
  const cached = first ? lookupMemo.get(first)?.get(path) : undefined;
  if (cached) return cached;
  const byReference = new Map<FieldDef, FieldNode[]>();
  for (const node of fieldsAt(nodes, path, fragments)) {
    const reference = object.fields.find(
      (field) => field.type === "reference" && field.referenceTo !== null && field.name === node.name.value,
    );
    if (reference) byReference.set(reference, [...(byReference.get(reference) ?? []), node]);
  }
  const result = [...byReference].map(([reference, selections]): JoinedLookup => {
    const target = targetOf(reference);
    return { reference, target, fields: selectedFields(target, selections, OWN, fragments) };
  });
  if (first) {
    const byPath = lookupMemo.get(first) ?? new Map<readonly string[], readonly JoinedLookup[]>();
    byPath.set(path, result);
    lookupMemo.set(first, byPath);
  }
  return result;
}

export function selectedFields(
  object: ObjectDef,
  nodes: readonly FieldNode[],
  path: readonly string[],
  fragments: Fragments,
): readonly FieldDef[] {
  const first = nodes[0];
  const cached = first ? memo.get(first)?.get(path) : undefined;
  if (cached) return cached;
  const members = membersOf(object);
  const chosen = new Set<FieldDef>(object.fields.filter((field) => field.name === "UID"));
  for (const field of fieldsAt(nodes, path, fragments)) {
    const member = members.get(field.name.value);
    if (member) chosen.add(member);
  }
  const result = [...chosen];
  if (first) {
    const byPath = memo.get(first) ?? new Map<readonly string[], readonly FieldDef[]>();
    byPath.set(path, result);
    memo.set(first, byPath);
  }
  return result;
}
