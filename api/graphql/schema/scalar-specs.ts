/**
 * Where each custom scalar's specification is (`@specifiedBy`), and the text of the two this service
 * defines itself, served at `GET /graphql/scalars/{name}`. Instant, LocalDate and LocalTime answer as
 * the published specifications say (their inputs accept a little more, as their descriptions tell);
 * no published specification describes BigDecimal (an exact decimal as a string) or Duration (whole
 * minutes as an Int), so those point at this service's own page, by a path on the API's own origin
 * (the service does not know the public address it is reached by).
 */
import { MAX_DURATION_MINUTES } from "../../model/field-values.ts";

/** The path of a scalar specification this service serves itself. */
const ownScalarSpecPath = (name: string) => `/graphql/scalars/${name}`;

export const SPECIFIED_BY_URL = {
  Instant: "https://scalars.graphql.org/andimarek/date-time.html",
  LocalDate: "https://scalars.graphql.org/andimarek/local-date.html",
  LocalTime: "https://scalars.graphql.org/chillicream/local-time.html",
  BigDecimal: ownScalarSpecPath("BigDecimal"),
  Duration: ownScalarSpecPath("Duration"),
} as const;

/** The specifications this service writes itself, as Markdown, by scalar name. */
export const OWN_SCALAR_SPECS: Record<string, string> = {
  BigDecimal: `# BigDecimal — GraphQL Custom Scalar

This is a String-based scalar.

## Overview

An exact decimal number of any size and precision, carried as a string so that no JSON parser
rounds it through binary floating point.

## Result spec

A string matching \`-?(0|[1-9][0-9]*)(\\.[0-9]*[1-9])?\`: no plus sign, no exponent, no leading zeros
in the integer part, no trailing zeros in the fraction, and \`0\` never negative.
Valid: \`"12.5"\`, \`"-0.001"\`, \`"100"\`. Invalid: \`"12.50"\`, \`"+1"\`, \`"1e3"\`, \`12.5\` (a number).

## Input spec

A string matching \`-?[0-9]+(\\.[0-9]+)?\` (surrounding whitespace ignored), or a JSON or GraphQL
number written without an exponent (a GraphQL float literal keeps its exact digits; a JSON number is
read as the shortest decimal that stands for it). Values are stored exactly, in the
canonical form of the result spec: \`"012.50"\` is stored and returned as \`"12.5"\`.
Invalid: \`"1e3"\`, \`"12."\`, \`".5"\`, \`"NaN"\`, \`true\`.
`,
  Duration: `# Duration — GraphQL Custom Scalar

This is an Int-based scalar.

## Overview

A length of time in whole minutes, from 0 to ${MAX_DURATION_MINUTES} (2^31 − 1, the largest GraphQL
Int, about 4,083 years).

## Result spec

A JSON integer from 0 to ${MAX_DURATION_MINUTES}. Valid: \`0\`, \`90\`. Invalid: \`1.5\`, \`"90"\`, \`-1\`.

## Input spec

A GraphQL Int literal or a JSON integer from 0 to ${MAX_DURATION_MINUTES}. Invalid: \`1.5\`, \`-1\`,
\`"90"\`, \`"PT1H30M"\`, ${MAX_DURATION_MINUTES + 1}.
`,
};
