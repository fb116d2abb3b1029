/**
 * A query operation → the read tree of its whole answer (store/read-tree.ts),
 * for a store that reads it in one go: connections without cursors, records
 * by UID, their fields, lookups and reverse lists, through aliases and
 * fragments, merged by response name as graphql-js does. Anything else
 * (cursors, directives, introspection, a filter on NOW(), a filter or order
 * that does not parse) gives null: the resolvers answer it, errors and all.
 * Pure; a plan serves every request whose shaping variables have the same values.
 */
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  GraphQLID,
  GraphQLInt,
  type GraphQLScalarType,
  GraphQLString,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  valueFromAST,
} from "graphql";
import { filterNeeds } from "../../eql/filter-needs.ts";
import { type Catalogue, type FieldDef, findObject, type ObjectDef } from "../../model/catalogue.ts";
import { names, reverseReferences } from "../../model/naming.ts";
import type { ReadNode, ReadValue, Slot } from "../../store/read-tree.ts";
import type { QueryLimits } from "./page-args.ts";
import { pageWindow, relatedLimit } from "./page-args.ts";
import { prepareArguments } from "./prepared-arguments.ts";

export type Variables = Record<string, unknown>;

export interface ReadPlan {
  tree: ReadNode;
  /** Each slot's value from a request's coerced variables; throws where the resolvers would refuse it. */
  slots: readonly ((variables: Variables) => ReadValue)[];
}

/** Arguments whose values shape a plan (its filters and orders), rather than fill its slots. */
const SHAPING = new Set(["filter", "orderBy", "after"]);
/** Members one JSON object may have in a statement (SQLite takes 1000 arguments a function). */
const MAX_ENTRIES = 250;

class NotReadable extends Error {}
const refuse = (): never => {
  throw new NotReadable();
};

type Member =
  | { kind: "value"; field: FieldDef }
  | { kind: "lookup"; reference: FieldDef; target: ObjectDef }
  | { kind: "related"; reference: FieldDef; child: ObjectDef };

const memberMaps = new WeakMap<ObjectDef, Map<string, Member>>();

/** What each GraphQL member of `object` reads (build-schema.ts's record fields). */
function membersOf(catalogue: Catalogue, object: ObjectDef): Map<string, Member> {
  let members = memberMaps.get(object);
  if (!members) {
    members = new Map();
    for (const field of object.fields) {
      if (field.type !== "reference") {
        members.set(field.name, { kind: "value", field });
        continue;
      }
      members.set(names.referenceId(field.name), { kind: "value", field });
      const target = field.referenceTo ? findObject(catalogue, field.referenceTo) : undefined;
      if (target) members.set(field.name, { kind: "lookup", reference: field, target });
    }
    for (const reference of reverseReferences(catalogue, object.name)) {
      const child = findObject(catalogue, reference.objectName);
      if (child) members.set(reference.reverseName as string, { kind: "related", reference, child });
    }
    memberMaps.set(object, members);
  }
  return members;
}

const rootMaps = new WeakMap<Catalogue, Map<string, { kind: "page" | "record"; object: ObjectDef }>>();

function rootsOf(catalogue: Catalogue) {
  let roots = rootMaps.get(catalogue);
  if (!roots) {
    roots = new Map();
    for (const object of catalogue.objects) {
      roots.set(names.listField(object.name), { kind: "page", object });
      roots.set(names.byIdField(object.name), { kind: "record", object });
    }
    rootMaps.set(catalogue, roots);
  }
  return roots;
}

/** The variables an operation's plan depends on: those given to shaping arguments anywhere in the document. */
export function shapingVariables(document: DocumentNode): string[] {
  const found = new Set<string>();
  const visit = (selectionSet: SelectionSetNode | undefined) => {
    for (const selection of selectionSet?.selections ?? []) {
      if (selection.kind === Kind.FIELD) {
        for (const argument of selection.arguments ?? []) {
          if (SHAPING.has(argument.name.value) && argument.value.kind === Kind.VARIABLE)
            found.add(argument.value.name.value);
        }
      }
      if (selection.kind !== Kind.FRAGMENT_SPREAD) visit(selection.selectionSet);
    }
  };
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION || definition.kind === Kind.FRAGMENT_DEFINITION)
      visit(definition.selectionSet);
  }
  return [...found];
}

interface Planning {
  catalogue: Catalogue;
  limits: QueryLimits;
  fragments: Map<string, FragmentDefinitionNode>;
  variables: Variables;
  slots: ((variables: Variables) => ReadValue)[];
}

/** The plan of `operation` given its coerced `variables`, or null when the resolvers must answer it. */
export function planRead(
  catalogue: Catalogue,
  limits: QueryLimits,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Variables,
): ReadPlan | null {
  if (operation.operation !== "query") return null;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const p: Planning = { catalogue, limits, fragments, variables, slots: [] };
  try {
    const tree = objectOf(p, [operation.selectionSet], "Query", (fields) => rootEntry(p, fields));
    return { tree, slots: p.slots };
  } catch {
    // Not readable in one go, or an argument the resolvers will refuse with its own error.
    return null;
  }
}

/** The fields of `sets` on type `typeName` by response name, in first-seen order, fragments spread. */
function collect(p: Planning, sets: readonly SelectionSetNode[], typeName: string) {
  const fields = new Map<string, FieldNode[]>();
  const add = (set: SelectionSetNode) => {
    for (const selection of set.selections) {
      if (selection.directives?.length) refuse();
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        fields.set(key, [...(fields.get(key) ?? []), selection]);
      } else {
        const fragment =
          selection.kind === Kind.INLINE_FRAGMENT
            ? selection
            : (p.fragments.get(selection.name.value) ?? refuse());
        if (fragment.directives?.length) refuse();
        // Every type here is an object type: a condition names it or no other type (validation holds to that).
        if (!fragment.typeCondition || fragment.typeCondition.name.value === typeName)
          add(fragment.selectionSet);
      }
    }
  };
  for (const set of sets) add(set);
  return fields;
}

/** The JSON object of the fields selected on `typeName`, each entry made by `entryOf` from its field nodes. */
function objectOf(
  p: Planning,
  sets: readonly SelectionSetNode[],
  typeName: string,
  entryOf: (fields: FieldNode[]) => ReadNode,
): ReadNode {
  const fields = collect(p, sets, typeName);
  if (fields.size > MAX_ENTRIES) refuse();
  const entries = [...fields].map(([key, nodes]) =>
    nodes[0]?.name.value === "__typename"
      ? ([key, { kind: "constant", value: typeName }] as const)
      : ([key, entryOf(nodes)] as const),
  );
  return { kind: "object", entries };
}

const selections = (fields: readonly FieldNode[]) =>
  fields.flatMap((field) => (field.selectionSet ? [field.selectionSet] : []));

const argumentOf = (field: FieldNode, name: string) =>
  field.arguments?.find((argument) => argument.name.value === name)?.value;

/** A shaping argument's value in this request (the plan is kept per the values of the variables given to them). */
function shape(p: Planning, field: FieldNode, name: string): string | null {
  const node = argumentOf(field, name);
  return node
    ? ((valueFromAST(node, GraphQLString, p.variables) as string | null | undefined) ?? null)
    : null;
}

type Read = (variables: Variables) => unknown;

/** How a request gives `field`'s argument `name` (a literal or a variable), coerced to `type`. */
function reader(field: FieldNode, name: string, type: GraphQLScalarType): Read {
  const node = argumentOf(field, name);
  if (!node) return () => undefined;
  if (node.kind !== Kind.VARIABLE) {
    const value = valueFromAST(node, type);
    return () => value;
  }
  const variable = node.name.value;
  return (variables) => variables[variable];
}

/** A slot filled per request by `fill`. */
function slot(p: Planning, fill: (variables: Variables) => ReadValue): Slot {
  p.slots.push(fill);
  return p.slots.length - 1;
}

/** A list's checked filter and order; lists whose filter reads NOW() are answered by the resolvers. */
function listOf(p: Planning, object: ObjectDef, field: FieldNode) {
  const { filter, order } = prepareArguments(
    p.catalogue,
    object,
    shape(p, field, "filter"),
    shape(p, field, "orderBy"),
  );
  if (filter && filterNeeds(filter).usesNow) refuse();
  return { object, filter, order };
}

function rootEntry(p: Planning, fields: FieldNode[]): ReadNode {
  const field = fields[0] as FieldNode;
  const root = rootsOf(p.catalogue).get(field.name.value) ?? refuse();
  if (root.kind === "record") {
    const read = reader(field, "UID", GraphQLID);
    const uid = slot(p, (variables) => {
      const value = read(variables);
      return typeof value === "string" ? value : refuse();
    });
    return { kind: "record", object: root.object, uid, node: recordOf(p, root.object, fields) };
  }
  if (shape(p, field, "after") !== null) refuse();
  const [readFirst, readOffset] = [reader(field, "first", GraphQLInt), reader(field, "offset", GraphQLInt)];
  const window = (variables: Variables) =>
    pageWindow(readFirst(variables) as number | null, readOffset(variables) as number | null, p.limits);
  const object = root.object;
  const list = listOf(p, object, field);
  const first = slot(p, (variables) => window(variables).first);
  const offset = slot(p, (variables) => window(variables).offset);
  const node = objectOf(p, selections(fields), names.connectionType(object.name), (parts) => {
    switch (parts[0]?.name.value) {
      case "edges":
        return {
          kind: "rows",
          node: objectOf(p, selections(parts), names.edgeType(object.name), (edge) => {
            const name = edge[0]?.name.value;
            if (name === "node") return recordOf(p, object, edge);
            return name === "offset" ? { kind: "rowOffset" } : refuse();
          }),
        };
      case "pageInfo":
        return objectOf(p, selections(parts), "PageInfo", (info) => {
          const name = info[0]?.name.value;
          if (name === "hasNextPage") return { kind: "hasMore" };
          return name === "hasPreviousPage" ? { kind: "hasPrevious" } : refuse();
        });
      case "totalCount":
        return { kind: "count" };
      default:
        return refuse();
    }
  });
  return { kind: "page", list, first, offset, node };
}

function recordOf(p: Planning, object: ObjectDef, fields: readonly FieldNode[]): ReadNode {
  return objectOf(p, selections(fields), object.name, (nodes) => {
    const field = nodes[0] as FieldNode;
    const member = membersOf(p.catalogue, object).get(field.name.value) ?? refuse();
    switch (member.kind) {
      case "value":
        return { kind: "value", field: member.field, nonNull: member.field.system };
      case "lookup":
        return {
          kind: "lookup",
          reference: member.reference,
          target: member.target,
          node: recordOf(p, member.target, nodes),
        };
      case "related": {
        const read = reader(field, "limit", GraphQLInt);
        return {
          kind: "related",
          list: listOf(p, member.child, field),
          reference: member.reference,
          limit: slot(p, (variables) => relatedLimit(read(variables) as number | null, p.limits)),
          node: recordOf(p, member.child, nodes),
        };
      }
    }
  });
}
