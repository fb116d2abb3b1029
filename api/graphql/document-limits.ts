/**
 * Limits a document must respect before it runs (SPEC.md §9): selection depth,
 * estimated cost (list sizes multiply down the tree: `first`, or a reverse
 * list's `limit`, taken at their maximum when given as variables), and the
 * number of aliased fields. Each breach is its own LIMIT_EXCEEDED message.
 */
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  GraphQLList,
  GraphQLObjectType,
  type GraphQLSchema,
  getNamedType,
  getNullableType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";

export interface DocumentLimits {
  maxDepth: number;
  maxCost: number;
  maxAliases: number;
  maxPageSize: number;
  defaultRelatedLimit: number;
  maxRelatedLimit: number;
}

/** The first limit the operation breaks, as a message; null when it keeps them all. */
export function checkDocumentLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  limits: DocumentLimits,
): string | null {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const root = schema.getRootType(operation.operation);
  if (!root) return null;
  let maxDepth = 0;
  let cost = 0;
  let aliases = 0;

  const sizeOf = (
    field: FieldNode,
    definition: GraphQLField<unknown, unknown>,
    parent: GraphQLObjectType,
  ): number => {
    const named = getNamedType(definition.type);
    const argument = (name: string) => field.arguments?.find((arg) => arg.name.value === name)?.value;
    const literal = (name: string, max: number, fallback: number) => {
      const value = argument(name);
      if (value === undefined) return fallback;
      return value.kind === Kind.INT ? Math.min(Number(value.value), max) : max;
    };
    if (named.name.endsWith("Connection") && definition.args.some((arg) => arg.name === "first")) {
      return literal("first", limits.maxPageSize, limits.maxPageSize);
    }
    const isList = getNullableType(definition.type) instanceof GraphQLList;
    if (isList && named instanceof GraphQLObjectType && !parent.name.endsWith("Connection")) {
      return literal("limit", limits.maxRelatedLimit, limits.defaultRelatedLimit);
    }
    return 1;
  };

  const walk = (
    selectionSet: SelectionSetNode,
    type: GraphQLObjectType,
    depth: number,
    rows: number,
    seen: Set<string>,
  ) => {
    maxDepth = Math.max(maxDepth, depth);
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        if (fragment && !seen.has(fragment.name.value))
          walk(fragment.selectionSet, type, depth, rows, new Set([...seen, fragment.name.value]));
        continue;
      }
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(selection.selectionSet, type, depth, rows, seen);
        continue;
      }
      if (selection.alias) aliases++;
      const definition = type.getFields()[selection.name.value];
      if (!definition) continue;
      const fieldRows = rows * sizeOf(selection, definition, type);
      cost += fieldRows;
      const child = getNamedType(definition.type);
      if (selection.selectionSet && child instanceof GraphQLObjectType)
        walk(selection.selectionSet, child, depth + 1, fieldRows, seen);
    }
  };
  walk(operation.selectionSet, root, 1, 1, new Set());

  if (maxDepth > limits.maxDepth)
    return `the query is nested ${maxDepth} levels deep; at most ${limits.maxDepth} are allowed`;
  if (aliases > limits.maxAliases)
    return `the document uses ${aliases} aliases; at most ${limits.maxAliases} are allowed`;
  if (cost > limits.maxCost)
    return `the query could return about ${cost} values; at most ${limits.maxCost} are allowed (lower first/limit)`;
  return null;
}
