/**
 * Limits a document must respect before it runs (SPEC.md §9): document and
 * operation in, the first limit it breaks (a message) or null out. Each breach
 * is its own LIMIT_EXCEEDED message:
 * - depth: selection-set levels;
 * - aliases: aliased fields, counted as often as their fragments are spread;
 * - scans: list queries (`jobs(...)`), `totalCount`s and the sub-queries of
 *   filters (a list query's or a reverse list's), each a store query or part of
 *   one that may read the tenant's whole table (a filter or order no index
 *   serves). A filter given as a variable is counted with the request's value
 *   (`hasFilterVariables` says when a document needs that second check);
 * - cost: rows listed (`first`, a reverse list's `limit`; sizes multiply down
 *   the tree), rows skipped (`offset`), and one per field selection once
 *   fragments are spread. Arguments given as variables are taken at their
 *   maximum; introspection lists at their length in this schema.
 *
 * Each fragment is tallied once (per introspection context) and its tally
 * reused wherever it is spread: costs multiply instead of expanding, so a
 * document whose fragments spread each other twice over is refused in time
 * linear to its text. Runs before validation: unknown fields, fragments and
 * types are skipped, and a fragment cycle counts once (validation refuses both).
 */
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  GraphQLList,
  type GraphQLObjectType,
  type GraphQLSchema,
  getNamedType,
  getNullableType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  SchemaMetaFieldDef,
  type SelectionSetNode,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
  visit,
} from "graphql";
import { countSubqueries } from "../eql/count-subqueries.ts";
import { type IntrospectionSizes, introspectionSizes } from "./introspection-sizes.ts";

export interface DocumentLimits {
  maxDepth: number;
  maxCost: number;
  maxAliases: number;
  /** Most list queries and `totalCount`s in one operation. */
  maxScans: number;
  maxPageSize: number;
  /** Largest `offset` of a list query. */
  maxOffset: number;
  defaultRelatedLimit: number;
  maxRelatedLimit: number;
}

/** What a selection set adds up to, its fragments spread. */
interface Tally {
  /** Selection-set levels, this one included. */
  levels: number;
  /** Rows listed or skipped, and values answered, per row of the parent. */
  perRow: number;
  /** Field selections, each planned and resolved at least once whatever the rows. */
  selections: number;
  aliases: number;
  scans: number;
}

/** Where an introspection selection stands: both change what its lists cost. */
interface Context {
  /** `ofType` levels above: past the schema's deepest wrapping they answer null. */
  ofTypeDepth: number;
  /** The rows enumerate the schema (`types`, their fields, ...): lists cost their mean length, not their longest. */
  wholeSchema: boolean;
}

const DATA: Context = { ofTypeDepth: 0, wholeSchema: false };
const NOTHING: Tally = { levels: 0, perRow: 0, selections: 0, aliases: 0, scans: 0 };

/** Sums stop here, so the largest tallies compare (and never turn into Infinity or NaN). */
const CEILING = Number.MAX_SAFE_INTEGER;
const add = (a: number, b: number) => Math.min(a + b, CEILING);
const times = (a: number, b: number) => Math.min(a * b, CEILING);

/** A request's variables, as sent. */
type Variables = Readonly<Record<string, unknown>>;

/**
 * The first limit the operation breaks, as a message; null when it keeps them all. `variables`: the
 * request's, for the filters given as variables (without them, those count as their defaults).
 */
export function checkDocumentLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  limits: DocumentLimits,
  variables: Variables | null = null,
): string | null {
  const root = schema.getRootType(operation.operation);
  if (!root) return null;
  const filters = filterTexts(operation, variables);
  const tally = tallyOperation(schema, document, operation.selectionSet, root, limits, filters);
  const cost = add(tally.perRow, tally.selections);
  if (tally.levels > limits.maxDepth)
    return `the query is nested ${tally.levels} levels deep; at most ${limits.maxDepth} are allowed`;
  if (tally.aliases > limits.maxAliases)
    return `the document uses ${tally.aliases} aliases; at most ${limits.maxAliases} are allowed`;
  if (tally.scans > limits.maxScans)
    return `the query asks for ${tally.scans} lists and totalCounts, its filters' sub-queries counted (each may read a whole table); at most ${limits.maxScans} are allowed`;
  if (cost > limits.maxCost)
    return `the query could read about ${Math.ceil(cost)} values (rows listed or skipped, and fields); at most ${limits.maxCost} are allowed (lower first, offset or limit)`;
  return null;
}

/** Whether some `filter` argument of `document` takes a variable: its price depends on each request's value. */
export function hasFilterVariables(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Argument(argument) {
      if (argument.name.value === "filter" && argument.value.kind === Kind.VARIABLE) found = true;
    },
  });
  return found;
}

/** A field's `filter` text: written in the document, or the variable's value (its default when not given). */
type FilterTexts = (field: FieldNode) => string | null;

function filterTexts(operation: OperationDefinitionNode, variables: Variables | null): FilterTexts {
  const defaults = new Map<string, string>();
  for (const definition of operation.variableDefinitions ?? []) {
    const value = definition.defaultValue;
    if (value?.kind === Kind.STRING) defaults.set(definition.variable.name.value, value.value);
  }
  return (field) => {
    const value = field.arguments?.find((arg) => arg.name.value === "filter")?.value;
    if (value?.kind === Kind.STRING) return value.value;
    if (value?.kind !== Kind.VARIABLE) return null;
    const name = value.name.value;
    const given = variables && name in variables ? variables[name] : defaults.get(name);
    return typeof given === "string" ? given : null;
  };
}

function tallyOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  selectionSet: SelectionSetNode,
  root: GraphQLObjectType,
  limits: DocumentLimits,
  filters: FilterTexts,
): Tally {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const sizes = introspectionSizes(schema);
  /** Tallies by fragment and context; null while one is being tallied (a cycle). */
  const tallied = new Map<string, Tally | null>();
  const objectTypeNamed = (name: string) => {
    const type = schema.getType(name);
    return isObjectType(type) ? type : null;
  };

  const fragmentTally = (name: string, context: Context): Tally => {
    const fragment = fragments.get(name);
    const type = fragment && objectTypeNamed(fragment.typeCondition.name.value);
    if (!fragment || !type) return NOTHING;
    const key = isIntrospection(type) ? `${name}:${context.ofTypeDepth}:${context.wholeSchema}` : name;
    const known = tallied.get(key);
    if (known !== undefined) return known ?? NOTHING;
    tallied.set(key, null);
    const tally = tallySet(fragment.selectionSet, type, isIntrospection(type) ? context : DATA);
    tallied.set(key, tally);
    return tally;
  };

  const tallySet = (set: SelectionSetNode, type: GraphQLObjectType, context: Context): Tally => {
    const tally: Tally = { levels: 1, perRow: 0, selections: 0, aliases: 0, scans: 0 };
    const spread = (inner: Tally) => {
      tally.levels = Math.max(tally.levels, inner.levels);
      tally.perRow = add(tally.perRow, inner.perRow);
      tally.selections = add(tally.selections, inner.selections);
      tally.aliases = add(tally.aliases, inner.aliases);
      tally.scans = add(tally.scans, inner.scans);
    };
    for (const selection of set.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        spread(fragmentTally(selection.name.value, context));
        continue;
      }
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const inner = selection.typeCondition ? objectTypeNamed(selection.typeCondition.name.value) : type;
        if (inner) spread(tallySet(selection.selectionSet, inner, isIntrospection(inner) ? context : DATA));
        continue;
      }
      if (selection.alias) tally.aliases = add(tally.aliases, 1);
      const definition = fieldOf(schema, type, selection.name.value);
      if (!definition) continue;
      const price = priceField(selection, definition, type, context, limits, sizes);
      if (!price) continue;
      const filter = isIntrospection(type) ? null : filters(selection);
      tally.selections = add(tally.selections, 1);
      tally.scans = add(tally.scans, add(price.scans, filter ? countSubqueries(filter) : 0));
      tally.perRow = add(tally.perRow, add(price.rows, price.skipped));
      const child = getNamedType(definition.type);
      if (!selection.selectionSet || !isObjectType(child)) continue;
      const inner = tallySet(selection.selectionSet, child, price.context);
      tally.levels = Math.max(tally.levels, inner.levels + 1);
      tally.perRow = add(tally.perRow, times(price.rows, inner.perRow));
      tally.selections = add(tally.selections, inner.selections);
      tally.aliases = add(tally.aliases, inner.aliases);
      tally.scans = add(tally.scans, inner.scans);
    }
    return tally;
  };

  return tallySet(selectionSet, root, DATA);
}

const isIntrospection = (type: GraphQLObjectType) => type.name.startsWith("__");

/** The field's definition, the introspection fields (which `getFields()` does not list) included. */
function fieldOf(
  schema: GraphQLSchema,
  type: GraphQLObjectType,
  name: string,
): GraphQLField<unknown, unknown> | undefined {
  if (name === TypeNameMetaFieldDef.name) return TypeNameMetaFieldDef;
  if (type === schema.getQueryType()) {
    if (name === SchemaMetaFieldDef.name) return SchemaMetaFieldDef;
    if (name === TypeMetaFieldDef.name) return TypeMetaFieldDef;
  }
  return type.getFields()[name];
}

/** What one field costs per row of its parent; null for a field that always answers null. */
interface Price {
  /** Rows it answers per parent row (1 for a single value). */
  rows: number;
  /** Rows the store reads past and drops per parent row (`offset`). */
  skipped: number;
  /** Store queries that may read a whole table. */
  scans: number;
  /** The context of its selections. */
  context: Context;
}

function priceField(
  field: FieldNode,
  definition: GraphQLField<unknown, unknown>,
  parent: GraphQLObjectType,
  context: Context,
  limits: DocumentLimits,
  sizes: IntrospectionSizes,
): Price | null {
  const named = getNamedType(definition.type);
  const isList = getNullableType(definition.type) instanceof GraphQLList;
  const price = (rows: number, more: Partial<Price> = {}): Price => ({
    rows,
    skipped: 0,
    scans: 0,
    context: DATA,
    ...more,
  });
  if (isIntrospection(parent)) {
    if (field.name.value === "ofType") {
      const ofTypeDepth = context.ofTypeDepth + 1;
      return ofTypeDepth > sizes.wrapping ? null : price(1, { context: { ofTypeDepth, wholeSchema: false } });
    }
    if (!isList || !isObjectType(named)) return price(1);
    const size = sizes.lists.get(`${parent.name}.${field.name.value}`);
    // A list of types other than `types` is a pick (say, one type's interfaces): its lists cost their longest.
    const wholeSchema =
      named.name === "__Type"
        ? field.name.value === "types"
        : context.wholeSchema || parent.name === "__Schema";
    const rows = size ? (context.wholeSchema ? size.average : size.longest) : sizes.types;
    return price(rows, { context: { ofTypeDepth: 0, wholeSchema } });
  }
  const literal = (name: string, max: number, fallback: number) => {
    const value = field.arguments?.find((arg) => arg.name.value === name)?.value;
    if (value === undefined) return fallback;
    // A negative value is refused when the field runs; it must not lower the price of the others.
    return value.kind === Kind.INT ? Math.min(Math.max(Number(value.value), 0), max) : max;
  };
  if (named.name.endsWith("Connection") && definition.args.some((arg) => arg.name === "first")) {
    return price(literal("first", limits.maxPageSize, limits.maxPageSize), {
      skipped: literal("offset", limits.maxOffset, 0),
      scans: 1,
    });
  }
  if (parent.name.endsWith("Connection"))
    return price(1, { scans: field.name.value === "totalCount" ? 1 : 0 });
  if (isList && isObjectType(named)) {
    return price(literal("limit", limits.maxRelatedLimit, limits.defaultRelatedLimit));
  }
  return price(1);
}
