/**
 * The custom scalars of SPEC.md §3: client input parsed strictly into the
 * stored representation (field-values.ts), stored values serialized to the wire.
 */
import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from "graphql";
import {
  FieldValueError,
  MAX_DURATION_MINUTES,
  parseBigDecimal,
  parseDuration,
  parseInstant,
  parseLocalDate,
  parseLocalTime,
} from "../../model/field-values.ts";
import { SPECIFIED_BY_URL } from "./scalar-specs.ts";

function literal(node: ValueNode): unknown {
  switch (node.kind) {
    case Kind.STRING:
      return node.value;
    case Kind.INT:
      return Number.parseInt(node.value, 10);
    case Kind.FLOAT:
      return node.value;
    default:
      throw new GraphQLError(`unexpected ${node.kind} literal`);
  }
}

function scalar(
  name: keyof typeof SPECIFIED_BY_URL,
  description: string,
  parse: (value: unknown) => unknown,
  serialize: (value: unknown) => unknown,
) {
  const parseOrExplain = (value: unknown) => {
    try {
      return parse(value);
    } catch (error) {
      throw error instanceof FieldValueError ? new GraphQLError(`${name}: ${error.message}`) : error;
    }
  };
  return new GraphQLScalarType({
    name,
    description,
    specifiedByURL: SPECIFIED_BY_URL[name],
    serialize,
    parseValue: parseOrExplain,
    parseLiteral: (node) => parseOrExplain(literal(node)),
  });
}

export const InstantScalar = scalar(
  "Instant",
  "An instant in ISO 8601, always rendered in UTC with milliseconds (2024-05-01T10:00:00.000Z); input accepts any offset.",
  parseInstant,
  (value) => new Date(typeof value === "number" ? value : parseInstant(value)).toISOString(),
);
export const LocalDateScalar = scalar("LocalDate", "A calendar date, 2024-05-01.", parseLocalDate, String);
export const LocalTimeScalar = scalar(
  "LocalTime",
  "A time of day, always rendered with seconds and milliseconds (10:30:00.000); input also accepts 10:30.",
  parseLocalTime,
  String,
);
export const BigDecimalScalar = scalar(
  "BigDecimal",
  "An exact decimal number, as a string on the wire.",
  parseBigDecimal,
  String,
);
export const DurationScalar = scalar(
  "Duration",
  `A duration in whole minutes, from 0 to ${MAX_DURATION_MINUTES} (about 4,083 years).`,
  parseDuration,
  Number,
);
