/**
 * How big a schema's introspection answers are, so the document limits can
 * price `__schema` and `__type` selections like any other: schema in, list
 * lengths and the deepest type wrapping out. Pure; measured once per schema.
 */
import {
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLSchema,
  type GraphQLType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  isUnionType,
} from "graphql";

/** A list's length per parent row: the mean over the schema, and the longest one. */
export interface ListSize {
  average: number;
  longest: number;
}

export interface IntrospectionSizes {
  /** By `<parent type>.<field>` (`__Type.fields`, `__Field.args`, ...): the introspection lists. */
  lists: ReadonlyMap<string, ListSize>;
  /** Every type of the schema: the length of `__Schema.types`, and the price of any list not in `lists`. */
  types: number;
  /** The most List/NonNull wrappers around any type the schema uses: `ofType` answers null past it. */
  wrapping: number;
}

const measured = new WeakMap<GraphQLSchema, IntrospectionSizes>();

/** The sizes of `schema`'s introspection (memoized per schema object). */
export function introspectionSizes(schema: GraphQLSchema): IntrospectionSizes {
  let sizes = measured.get(schema);
  if (!sizes) {
    sizes = measure(schema);
    measured.set(schema, sizes);
  }
  return sizes;
}

function measure(schema: GraphQLSchema): IntrospectionSizes {
  const types = Object.values(schema.getTypeMap());
  const directives = schema.getDirectives();
  const perType = { fields: [] as number[], inputFields: [] as number[], enumValues: [] as number[] };
  const related = { interfaces: [] as number[], possibleTypes: [] as number[] };
  const fieldArgs: number[] = [];
  let wrapping = 0;
  const wrapped = (type: GraphQLType) => {
    let depth = 0;
    for (let t = type; isListType(t) || isNonNullType(t); t = t.ofType) depth++;
    wrapping = Math.max(wrapping, depth);
  };
  for (const type of types) {
    const fields: GraphQLField<unknown, unknown>[] =
      isObjectType(type) || isInterfaceType(type) ? Object.values(type.getFields()) : [];
    const inputs: GraphQLInputField[] = isInputObjectType(type) ? Object.values(type.getFields()) : [];
    perType.fields.push(fields.length);
    perType.inputFields.push(inputs.length);
    perType.enumValues.push(isEnumType(type) ? type.getValues().length : 0);
    related.interfaces.push(isObjectType(type) || isInterfaceType(type) ? type.getInterfaces().length : 0);
    related.possibleTypes.push(
      isUnionType(type) || isInterfaceType(type) ? schema.getPossibleTypes(type).length : 0,
    );
    for (const field of fields) {
      fieldArgs.push(field.args.length);
      wrapped(field.type);
      for (const arg of field.args) wrapped(arg.type);
    }
    for (const input of inputs) wrapped(input.type);
  }
  for (const directive of directives) for (const arg of directive.args) wrapped(arg.type);

  const lists = new Map<string, ListSize>([
    ["__Schema.types", { average: types.length, longest: types.length }],
    ["__Schema.directives", { average: directives.length, longest: directives.length }],
    ["__Type.fields", sizeOf(perType.fields)],
    ["__Type.inputFields", sizeOf(perType.inputFields)],
    ["__Type.enumValues", sizeOf(perType.enumValues)],
    ["__Type.interfaces", sizeOf(related.interfaces)],
    ["__Type.possibleTypes", sizeOf(related.possibleTypes)],
    ["__Field.args", sizeOf(fieldArgs)],
    ["__Directive.args", sizeOf(directives.map((directive) => directive.args.length))],
  ]);
  return { lists, types: types.length, wrapping };
}

function sizeOf(lengths: readonly number[]): ListSize {
  if (lengths.length === 0) return { average: 0, longest: 0 };
  let total = 0;
  let longest = 0;
  for (const length of lengths) {
    total += length;
    longest = Math.max(longest, length);
  }
  return { average: total / lengths.length, longest };
}
