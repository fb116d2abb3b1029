/** The document limits (SPEC.md §9), limit by limit: a document in, the limit it breaks (or none) out. */
import { describe, expect, test } from "bun:test";
import { getIntrospectionQuery, type OperationDefinitionNode, parse } from "graphql";
import { checkDocumentLimits, type DocumentLimits } from "../../api/graphql/document-limits.ts";
import { buildTenantSchema } from "../../api/graphql/schema/build-schema.ts";
import { assembleCatalogue } from "../../api/model/assemble-catalogue.ts";

const schema = buildTenantSchema(assembleCatalogue("acme", { version: 1, objects: [], fields: [] }));

/** The defaults of api/config.ts. */
const LIMITS: DocumentLimits = {
  maxDepth: 12,
  maxCost: 100_000,
  maxAliases: 100,
  maxScans: 10,
  maxPageSize: 200,
  maxOffset: 10_000,
  defaultRelatedLimit: 20,
  maxRelatedLimit: 2000,
};

/** The message of the first limit the document's (first) operation breaks, or null. */
function breach(query: string, limits: Partial<DocumentLimits> = {}): string | null {
  const document = parse(query, { maxTokens: 20_000 });
  const operation = document.definitions.find(
    (definition): definition is OperationDefinitionNode => definition.kind === "OperationDefinition",
  ) as OperationDefinitionNode;
  return checkDocumentLimits(schema, document, operation, { ...LIMITS, ...limits });
}

const repeat = (count: number, make: (i: number) => string) =>
  Array.from({ length: count }, (_, i) => make(i)).join(" ");

/** `levels` fragments, each spreading the next `width` times (wrapped by `wrap`): width^levels fields expanded. */
function fragmentBomb(root: string, levels: number, width: number, wrap = (spreads: string) => spreads) {
  let text = `{ ${root.replace("$", "...F0")} }`;
  for (let i = 0; i < levels; i++) {
    const body = i + 1 < levels ? wrap(repeat(width, () => `...F${i + 1}`)) : "UID Name";
    text += `\nfragment F${i} on Jobs { ${body} }`;
  }
  return text;
}

const DEPTH = /levels deep/;
const ALIASES = /aliases/;
const SCANS = /lists and totalCounts/;
const COST = /could read about/;

/** `CreatedBy { CreatedBy { ... { UID } } }`, `count` times. */
const createdBy = (count: number) => `${"CreatedBy { ".repeat(count)}UID${" }".repeat(count)}`;
/** A document nested `levels` deep (its root selection set is the first level). */
const nested = (levels: number) => `{ usersById(UID: "x") { ${createdBy(levels - 2)} } }`;

const TABLE: [what: string, query: string, expected: RegExp | null, limits?: Partial<DocumentLimits>][] = [
  // depth
  ["12 levels pass", nested(12), null],
  ["13 levels are refused", nested(13), DEPTH],
  [
    "levels inside fragments count",
    `{ usersById(UID: "x") { ...U } } fragment U on Users { ${createdBy(11)} }`,
    DEPTH,
  ],
  [
    "levels inside inline fragments count",
    `{ usersById(UID: "x") { ... on Users { ${createdBy(11)} } } }`,
    DEPTH,
  ],
  // aliases
  ["100 aliases pass", `{ ${repeat(100, (i) => `a${i}: jobsById(UID: "x") { UID }`)} }`, null],
  ["101 aliases are refused", `{ ${repeat(101, (i) => `a${i}: jobsById(UID: "x") { UID }`)} }`, ALIASES],
  [
    "an alias counts as often as its fragment is spread",
    `{ jobsById(UID: "x") { ...A ...B } } fragment A on Jobs { ...B ...B } fragment B on Jobs { ${repeat(40, (i) => `b${i}: UID`)} }`,
    ALIASES,
  ],
  // scans: list queries and totalCounts
  ["a list with its count", `{ jobs(first: 20) { totalCount edges { node { UID } } } }`, null],
  ["10 lists pass", `{ ${repeat(10, (i) => `a${i}: jobs(first: 1) { edges { node { UID } } }`)} }`, null],
  [
    "11 lists are refused",
    `{ ${repeat(11, (i) => `a${i}: jobs(first: 1) { edges { node { UID } } }`)} }`,
    SCANS,
  ],
  ["100 totalCounts are refused", `{ ${repeat(100, (i) => `a${i}: jobs { totalCount }`)} }`, SCANS],
  ["5 lists with their counts pass", `{ ${repeat(5, (i) => `a${i}: jobs(first: 1) { totalCount }`)} }`, null],
  [
    "counts count each time their fragment is spread",
    `{ ...Q ...Q } fragment Q on Query { jobs { totalCount } a: jobs { totalCount } b: jobs { totalCount } }`,
    SCANS,
  ],
  ["records by UID are no scans", `{ ${repeat(50, (i) => `a${i}: jobsById(UID: "x") { UID }`)} }`, null],
  // cost: rows listed, skipped, and field selections
  [
    "a page of 200 with lookups and reverse lists",
    `{ jobs { edges { node { UID Region { Name } JobAllocations { Name Resource { Name } } } } } }`,
    null,
  ],
  [
    "reverse lists multiply",
    `{ jobs { edges { node { JobAllocations(limit: 2000) { Job { JobAllocations(limit: 2000) { Name } } } } } } }`,
    COST,
  ],
  [
    "100 aliased deep offsets are refused",
    `{ ${repeat(100, (i) => `a${i}: jobs(offset: 9999, first: 1) { edges { node { UID } } }`)} }`,
    COST,
    { maxScans: 100 },
  ],
  [
    "10 deep offsets are refused",
    `{ ${repeat(10, (i) => `a${i}: jobs(offset: 10000, first: 1) { edges { node { UID } } }`)} }`,
    COST,
  ],
  [
    "10 shallow offsets pass",
    `{ ${repeat(10, (i) => `a${i}: jobs(offset: 100, first: 1) { edges { node { UID } } }`)} }`,
    null,
  ],
  [
    "an offset above the limit is priced at the limit",
    `{ ${repeat(10, (i) => `a${i}: jobs(offset: 99999999, first: 1) { edges { node { UID } } }`)} }`,
    COST,
  ],
  [
    "an offset given as a variable is priced at the limit",
    `query ($o: Int) { ${repeat(10, (i) => `a${i}: jobs(offset: $o, first: 1) { edges { node { UID } } }`)} }`,
    COST,
  ],
  [
    "a negative first does not lower the price of the rest",
    `{ a: jobs(first: -2000000000) { edges { node { UID } } } b: jobs { edges { node { JobAllocations(limit: 2000) { Name } } } } }`,
    COST,
  ],
  // fragments are priced, never expanded
  ["the 24-fragment bomb", fragmentBomb(`jobsById(UID: "x") { $ }`, 24, 2), COST],
  [
    "a bomb of 1900 fragments (the price saturates, never Infinity or NaN)",
    fragmentBomb(`jobsById(UID: "x") { $ }`, 1900, 2),
    COST,
  ],
  ["a bomb of many spreads", fragmentBomb(`jobsById(UID: "x") { $ }`, 8, 10), COST],
  [
    "a bomb in inline fragments",
    fragmentBomb(`jobsById(UID: "x") { $ }`, 24, 2, (s) => `... on Jobs { ${s} } ... { ${s} }`),
    COST,
  ],
  ["a bomb under a page of no rows", fragmentBomb(`jobs(first: 0) { edges { node { $ } } }`, 24, 2), COST],
  [
    "a bomb under a list introspection answers empty",
    `{ __schema { types { interfaces { ...T } } } } ${repeat(20, (i) => `fragment T${i ? i : ""} on __Type { ${i < 19 ? `...T${i + 1} ...T${i + 1}` : "name"} }`)}`,
    COST,
  ],
  ["a small fragment tree passes", fragmentBomb(`jobsById(UID: "x") { $ }`, 6, 2), null],
  [
    "a fragment cycle is left to validation",
    `{ jobsById(UID: "x") { ...A } } fragment A on Jobs { ...B } fragment B on Jobs { ...A UID }`,
    null,
  ],
  [
    "unknown fields, fragments and types are left to validation",
    `{ nope { x } jobsById(UID: "x") { ...Missing ... on Nope { y } } }`,
    null,
  ],
  // introspection counts like any query
  ["the full introspection query (GraphiQL, code generators)", getIntrospectionQuery(), null],
  [
    "the full introspection query with every option",
    getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
      oneOf: true,
    }),
    null,
  ],
  [
    "introspection nested 13 levels",
    `{ __type(name: "Jobs") ${"{ fields { type ".repeat(6)}{ name }${" } }".repeat(6)} }`,
    DEPTH,
  ],
  [
    "fields of fields of fields multiply",
    `{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }`,
    COST,
  ],
  [
    "20 aliased type lists pass",
    `{ ${repeat(20, (i) => `a${i}: __schema { types { fields { name type { name } } } }`)} }`,
    null,
  ],
  [
    "100 aliased type lists are refused",
    `{ ${repeat(100, (i) => `a${i}: __schema { types { fields { name type { name } } } }`)} }`,
    COST,
  ],
  [
    "a picked type's lists cost their longest",
    `{ ${repeat(100, (i) => `a${i}: __type(name: "SchemaMutations") { fields { name description args { name description type { name kind ofType { name kind } } } } }`)} }`,
    COST,
  ],
  [
    "ofType answers null past the deepest wrapping: no levels, no cost",
    `{ __type(name: "Jobs") ${"{ ofType ".repeat(40)}{ name }${" }".repeat(40)} }`,
    null,
  ],
  [
    "each sub-query of a filter is a scan: a list with its count and 8 sub-queries passes",
    `{ jobs(filter: "${Array(8).fill("UID IN (SELECT UID FROM Jobs)").join(" OR ")}") { totalCount } }`,
    null,
  ],
  [
    "each sub-query of a filter is a scan: a ninth is over",
    `{ jobs(filter: "${Array(9).fill("UID IN (select UID FROM Jobs)").join(" OR ")}") { totalCount } }`,
    SCANS,
  ],
  [
    "sub-queries of a reverse list's filter are scans too; a string holding '(SELECT' is none",
    `{ jobs { edges { node { JobAllocations(filter: "${Array(10).fill("UID IN (SELECT UID FROM Jobs) OR Name == '(SELECT'").join(" OR ")}") { UID } } } } }`,
    SCANS,
  ],
  [
    "a filter given as a variable counts as its default when the request's value is not known",
    `query ($f: String = "${Array(9).fill("UID IN (SELECT UID FROM Jobs)").join(" OR ")}") { jobs(filter: $f) { totalCount } }`,
    SCANS,
  ],
  [
    "aliases inside introspection count",
    `{ __schema { ${repeat(101, (i) => `a${i}: types { name }`)} } }`,
    ALIASES,
  ],
];

describe("document limits", () => {
  for (const [what, query, expected, limits] of TABLE) {
    test(what, () => {
      const message = breach(query, limits);
      if (expected) expect(message).toMatch(expected);
      else expect(message).toBeNull();
    });
  }

  test("each limit names its figures", () => {
    expect(breach(nested(13))).toBe("the query is nested 13 levels deep; at most 12 are allowed");
    expect(breach(`{ ${repeat(6, (i) => `a${i}: jobs { totalCount }`)} }`)).toBe(
      "the query asks for 12 lists and totalCounts, its filters' sub-queries counted (each may read a whole table); at most 10 are allowed",
    );
    // 10 × (1 row + 10000 skipped + edges + node + UID), and 40 field selections.
    expect(
      breach(`{ ${repeat(10, (i) => `a${i}: jobs(offset: 10000, first: 1) { edges { node { UID } } }`)} }`),
    ).toBe(
      "the query could read about 100080 values (rows listed or skipped, and fields); at most 100000 are allowed (lower first, offset or limit)",
    );
  });

  // Not timed (speed lives in bench/): expanded, the bomb took 21 s, past the test's timeout.
  test("the 24-fragment bomb is priced (2^24 selections) without being expanded", () => {
    expect(breach(fragmentBomb(`jobsById(UID: "x") { $ }`, 24, 2))).toContain(`about ${2 ** 25 + 2} values`);
  });
});
