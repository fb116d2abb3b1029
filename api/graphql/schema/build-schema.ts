/**
 * Catalogue in, GraphQLSchema out (SPEC.md §3, §5, §7): per object its type,
 * connection, `x`/`xById` queries, `schema { insertX updateX upsertX deleteX }`
 * mutations and the `schemaX` subscription type. Pure: resolvers are passed in
 * (execution attaches them); without them the schema still introspects.
 */
import {
  GraphQLBoolean,
  GraphQLEnumType,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigMap,
  type GraphQLFieldResolver,
  GraphQLID,
  GraphQLInputObjectType,
  type GraphQLInputType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLOutputType,
  GraphQLSchema,
  GraphQLString,
} from "graphql";
import type { Catalogue, FieldDef, ObjectDef } from "../../model/catalogue.ts";
import { memberName } from "../../model/member-name.ts";
import { names, reverseReferences } from "../../model/naming.ts";
import {
  BigDecimalScalar,
  DurationScalar,
  InstantScalar,
  LocalDateScalar,
  LocalTimeScalar,
} from "./scalars.ts";

// biome-ignore lint/suspicious/noExplicitAny: resolvers see arbitrary sources and contexts
type Resolver = GraphQLFieldResolver<any, any>;

/**
 * Resolvers by role; each factory gets the object or field it serves. All optional: without
 * them the schema still builds and introspects (bench/schema-build.ts builds it bare).
 */
export interface SchemaResolvers {
  list?: (object: ObjectDef) => Resolver;
  byId?: (object: ObjectDef) => Resolver;
  lookup?: (field: FieldDef) => Resolver;
  reverse?: (field: FieldDef) => Resolver;
  /** `Mutation.schema`: runs the whole selection as one unit of work. */
  mutations?: Resolver;
  /** Every operation field (`insertX`, `updateX`, ...): its entry in what `mutations` returned. */
  operationResult?: Resolver;
}

const nonNull = <T extends GraphQLOutputType | GraphQLInputType>(type: T) => new GraphQLNonNull(type);

/** The scalar GraphQL type holding a field's value (a reference's value is its target's UID). */
function scalarType(field: FieldDef) {
  switch (field.type) {
    case "id":
    case "reference":
      return GraphQLID;
    case "int":
      return GraphQLInt;
    case "duration":
      return DurationScalar;
    case "decimal":
      return BigDecimalScalar;
    case "boolean":
      return GraphQLBoolean;
    case "date":
      return LocalDateScalar;
    case "time":
      return LocalTimeScalar;
    case "datetime":
      return InstantScalar;
    case "multipicklist":
      return new GraphQLList(nonNull(GraphQLString));
    default:
      return GraphQLString;
  }
}

/**
 * A field's description; a picklist's also lists its allowed values (picklists stay `String`s in the
 * types, for clients written against them, so the values are told in words).
 */
function describe(field: FieldDef): string | undefined {
  const own = field.description ?? field.label ?? undefined;
  if ((field.type !== "picklist" && field.type !== "multipicklist") || !field.items?.length) return own;
  const values = `Allowed values: ${field.items.map((item) => JSON.stringify(item)).join(", ")}.`;
  return own ? `${own}. ${values}` : values;
}
const isWritable = (field: FieldDef) => !field.readOnly && !field.system;

const PageInfo = new GraphQLObjectType({
  name: "PageInfo",
  fields: {
    hasNextPage: { type: nonNull(GraphQLBoolean) },
    hasPreviousPage: { type: nonNull(GraphQLBoolean) },
    startCursor: { type: GraphQLString },
    endCursor: { type: GraphQLString },
  },
});

const ChangeOperation = new GraphQLEnumType({
  name: "ChangeOperation",
  values: { INSERT: {}, UPDATE: {}, DELETE: {} },
});

const listArgs = {
  filter: {
    type: GraphQLString,
    description: "An EQL filter, e.g. \"JobStatus == 'Queued' AND Duration > 30\".",
  },
  orderBy: {
    type: GraphQLString,
    description: 'e.g. "Start DESC, Name ASC"; UID is always the final tie-breaker.',
  },
  first: { type: GraphQLInt, description: "Page size, default and maximum 200." },
  after: { type: GraphQLString, description: "The endCursor of the previous page." },
  offset: { type: GraphQLInt, description: "Rows to skip, at most 10000 (page further with after)." },
};

const reverseArgs = {
  filter: listArgs.filter,
  orderBy: listArgs.orderBy,
  limit: { type: GraphQLInt, description: "Default 20, maximum 2000." },
};

/** Builds the tenant's schema. Deterministic: the same catalogue gives the same SDL. */
export function buildTenantSchema(catalogue: Catalogue, resolvers: SchemaResolvers = {}): GraphQLSchema {
  const objects = [...catalogue.objects].sort((a, b) => a.name.localeCompare(b.name));
  const types = new Map<string, GraphQLObjectType>();
  const typeOf = (name: string) => types.get(name) as GraphQLObjectType;

  for (const object of objects) {
    types.set(
      object.name,
      new GraphQLObjectType({
        name: object.name,
        description: object.description ?? object.label,
        fields: () => recordFields(catalogue, object, typeOf, resolvers),
      }),
    );
  }

  const query: GraphQLFieldConfigMap<unknown, unknown> = {};
  const mutations: GraphQLFieldConfigMap<unknown, unknown> = {};
  const subscription: GraphQLFieldConfigMap<unknown, unknown> = {};
  for (const object of objects) {
    const type = typeOf(object.name);
    query[names.listField(object.name)] = {
      type: nonNull(connectionType(object, type)),
      args: listArgs,
      resolve: resolvers.list?.(object),
    };
    query[names.byIdField(object.name)] = {
      type,
      args: { UID: { type: nonNull(GraphQLID) } },
      resolve: resolvers.byId?.(object),
    };
    Object.assign(mutations, mutationFields(object, resolvers));
    subscription[names.subscriptionField(object.name)] = changeEventField(object);
  }

  return new GraphQLSchema({
    query: new GraphQLObjectType({ name: "Query", fields: query }),
    mutation: new GraphQLObjectType({
      name: "Mutation",
      fields: {
        schema: {
          type: nonNull(new GraphQLObjectType({ name: "SchemaMutations", fields: mutations })),
          resolve: resolvers.mutations ?? (() => ({})),
        },
      },
    }),
    subscription: new GraphQLObjectType({ name: "Subscription", fields: subscription }),
  });
}

function recordFields(
  catalogue: Catalogue,
  object: ObjectDef,
  typeOf: (name: string) => GraphQLObjectType,
  resolvers: SchemaResolvers,
): GraphQLFieldConfigMap<unknown, unknown> {
  const fields: GraphQLFieldConfigMap<unknown, unknown> = {};
  for (const field of object.fields) {
    const type = scalarType(field);
    fields[memberName(field)] = {
      type: field.system ? nonNull(type) : type,
      description: describe(field),
      // Record values are keyed by field name: a reference's value (its UID) sits under `Foo`, shown as `FooId`.
      resolve:
        field.type === "reference" ? (source) => (source as Record<string, unknown>)[field.name] : undefined,
    };
    if (field.type === "reference" && field.referenceTo) {
      fields[field.name] = {
        type: typeOf(field.referenceTo),
        description: describe(field),
        resolve: resolvers.lookup?.(field),
      };
    }
  }
  for (const reference of reverseReferences(catalogue, object.name)) {
    fields[reference.reverseName as string] = {
      type: nonNull(new GraphQLList(nonNull(typeOf(reference.objectName)))),
      description: `${reference.objectName} whose ${reference.name} is this record.`,
      args: reverseArgs,
      resolve: resolvers.reverse?.(reference),
    };
  }
  return fields;
}

function connectionType(object: ObjectDef, node: GraphQLObjectType): GraphQLObjectType {
  const edge = new GraphQLObjectType({
    name: names.edgeType(object.name),
    fields: {
      cursor: { type: nonNull(GraphQLString) },
      node: { type: nonNull(node) },
      offset: { type: nonNull(GraphQLInt) },
    },
  });
  return new GraphQLObjectType({
    name: names.connectionType(object.name),
    fields: {
      edges: { type: nonNull(new GraphQLList(nonNull(edge))) },
      pageInfo: { type: nonNull(PageInfo) },
      totalCount: {
        type: nonNull(GraphQLInt),
        // A list resolver passes a function, so the count runs only when selected.
        resolve: (source) => {
          const count = (source as { totalCount: unknown }).totalCount;
          return typeof count === "function" ? count() : count;
        },
      },
    },
  });
}

function mutationFields(
  object: ObjectDef,
  resolvers: SchemaResolvers,
): GraphQLFieldConfigMap<unknown, unknown> {
  const writable = object.fields.filter(isWritable);
  // Nullable in the types (an update sets only what it names), so the rule is told in words.
  const inputDescription = (field: FieldDef) => {
    const own = describe(field);
    if (!field.required) return own;
    return `${own ? `${own}. ` : ""}Required: an insert or upsert must set it; an update cannot clear it.`;
  };
  const inputFields = Object.fromEntries(
    writable.map((field) => [
      memberName(field),
      { type: scalarType(field), description: inputDescription(field) },
    ]),
  );
  const updateInput = new GraphQLInputObjectType({
    name: names.updateInput(object.name),
    fields: { UID: { type: nonNull(GraphQLID) }, ...inputFields },
  });
  const idAlias = {
    type: GraphQLString,
    description: "Names the new record's UID for the rest of this request.",
  };
  const op = (args: GraphQLFieldConfig<unknown, unknown>["args"]) => ({
    type: GraphQLID,
    args,
    resolve: resolvers.operationResult,
  });
  const fields: GraphQLFieldConfigMap<unknown, unknown> = {
    [names.updateField(object.name)]: op({
      input: { type: nonNull(updateInput) },
    }),
    [names.deleteField(object.name)]: op({ UID: { type: nonNull(GraphQLID) } }),
  };
  // GraphQL forbids empty input types: an object without writable fields is inserted without `input`, and
  // cannot be upserted (an upsert key is a writable field).
  if (writable.length === 0) {
    fields[names.insertField(object.name)] = op({ idAlias });
    return fields;
  }
  const newInput = new GraphQLInputObjectType({ name: names.newInput(object.name), fields: inputFields });
  fields[names.insertField(object.name)] = op({
    input: { type: nonNull(newInput) },
    idAlias,
  });
  fields[names.upsertField(object.name)] = op({
    input: { type: nonNull(newInput) },
    keyField: { type: nonNull(GraphQLString) },
    idAlias,
  });
  return fields;
}

function changeEventField(object: ObjectDef): GraphQLFieldConfig<unknown, unknown> {
  const record = new GraphQLObjectType({
    name: names.changeRecordType(object.name),
    fields: Object.fromEntries(
      object.fields.map((field) => [
        memberName(field),
        { type: scalarType(field), description: describe(field) },
      ]),
    ),
  });
  return {
    type: new GraphQLObjectType({
      name: names.changeEventType(object.name),
      fields: {
        operation: { type: nonNull(ChangeOperation) },
        timestamp: { type: nonNull(InstantScalar) },
        data: { type: record },
        previous: { type: record },
      },
    }),
    args: {
      operation: { type: new GraphQLList(nonNull(ChangeOperation)), description: "One value or a list." },
      filter: {
        type: GraphQLString,
        description: "EQL, tested against the record's new (for DELETE: last) values.",
      },
      extendedFilter: {
        type: GraphQLString,
        description: "EQL over Current.<field>, Previous.<field> and Operation.",
      },
    },
  };
}
