/**
 * The record fields a selection reads, so a store query fetches only those
 * columns: the fields selected, the reference behind a lookup, and always UID
 * (reverse lists and cursors key on it). Followed through fragments and inline
 * fragments; @skip/@include are ignored (reading a column too many is harmless).
 * Memoized per field nodes: documents are cached, so their nodes come back.
 */
import type { FieldNode, FragmentDefinitionNode, SelectionSetNode } from "graphql";
import type { FieldDef, ObjectDef } from "../../model/catalogue.ts";
import { memberName } from "../../model/member-name.ts";
import type { JoinedLookup } from "../../store/store.ts";

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
      members.set(memberName(field), field);
      if (field.type === "reference") members.set(field.name, field);
    }
    memberMaps.set(object, members);
  }
  return members;
}

/** Paths into a selection, passed by identity (the memos key on the path array). */
export const OWN: readonly string[] = [];
export const EDGE_NODE: readonly string[] = ["edges", "node"];

/** One object per sequence of field nodes: a trie of weak maps, so equal sequences give the same key. */
interface NodesKey {
  next: WeakMap<FieldNode, NodesKey>;
}
const ROOT_KEY: NodesKey = { next: new WeakMap() };

/**
 * The same object for the same field nodes in the same order. A field's selection is the union
 * of all its nodes' (a field merged from a fragment and the query's own selection, say), so
 * whatever is worked out from a selection is keyed on all of them, never on the first alone.
 */
export function nodesKey(nodes: readonly FieldNode[]): object {
  let key = ROOT_KEY;
  for (const node of nodes) {
    let next = key.next.get(node);
    if (!next) {
      next = { next: new WeakMap() };
      key.next.set(node, next);
    }
    key = next;
  }
  return key;
}

type Memo<T> = WeakMap<object, Map<readonly string[], T>>;

/**
 * `compute()` once per field nodes and path array: the nodes always select on the same object,
 * so the object needs no key.
 */
function memoized<T>(
  memo: Memo<T>,
  nodes: readonly FieldNode[],
  path: readonly string[],
  compute: () => T,
): T {
  const key = nodesKey(nodes);
  const byPath = memo.get(key) ?? new Map<readonly string[], T>();
  memo.set(key, byPath);
  let value = byPath.get(path);
  if (value === undefined) {
    value = compute();
    byPath.set(path, value);
  }
  return value;
}

const fieldMemo: Memo<readonly FieldDef[]> = new WeakMap();

/**
 * The fields of `object` read under `nodes` at `path` (`OWN` for the field's own selection,
 * `EDGE_NODE` for a connection's nodes). The same array comes back for the same nodes and path.
 */
export function selectedFields(
  object: ObjectDef,
  nodes: readonly FieldNode[],
  path: readonly string[],
  fragments: Fragments,
): readonly FieldDef[] {
  return memoized(fieldMemo, nodes, path, () => {
    const members = membersOf(object);
    const chosen = new Set<FieldDef>(object.fields.filter((field) => field.name === "UID"));
    for (const field of fieldsAt(nodes, path, fragments)) {
      const member = members.get(field.name.value);
      if (member) chosen.add(member);
    }
    return [...chosen];
  });
}

const lookupMemo: Memo<readonly JoinedLookup[]> = new WeakMap();

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
  return memoized(lookupMemo, nodes, path, () => {
    const byReference = new Map<FieldDef, FieldNode[]>();
    for (const node of fieldsAt(nodes, path, fragments)) {
      const reference = object.fields.find(
        (field) => field.type === "reference" && field.referenceTo !== null && field.name === node.name.value,
      );
      if (reference) byReference.set(reference, [...(byReference.get(reference) ?? []), node]);
    }
    return [...byReference].map(([reference, selections]): JoinedLookup => {
      const target = targetOf(reference);
      return { reference, target, fields: selectedFields(target, selections, OWN, fragments) };
    });
  });
}
