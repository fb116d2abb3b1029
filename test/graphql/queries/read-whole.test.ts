/**
 * One answer, three ways of making it: graphql-js resolving every field,
 * graphql-jit resolving every field, and the store reading the whole answer in
 * one statement. Over a real SQLite store, every query here must come back
 * byte for byte the same from all three (errors included), and the store must
 * have read whole exactly the queries it can.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Principal } from "../../../api/auth/principal.ts";
import { createGraphQLService } from "../../../api/graphql/graphql-service.ts";
import { createReadAnswers } from "../../../api/graphql/queries/read-answers.ts";
import { createTenantSchemas, documentLimits } from "../../../api/graphql/tenant-schemas.ts";
import { CUSTOM_FIELD_TYPES } from "../../../api/model/catalogue.ts";
import { createLogger } from "../../../common/log.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../../support/app.ts";
import { graphqlClient } from "../../support/graphql.ts";
import { testEngine } from "../../support/test-store.ts";

let t: TestApp;
let acme: ProvisionedTenant;
let principal: Principal;
let engines: Record<"graphql-js" | "graphql-jit" | "store", ReturnType<typeof createGraphQLService>>;
const ids: Record<string, string> = {};

// Values at the edges of each type's GraphQL form: escapes, non-BMP text, 32-bit bounds, instants
// before 1970 and at the ends of four-digit years, empty and absent lists.
const EVERYTHING = [
  {
    F_string: 'quote " backslash \\ control \u0001\b\f\n\r\t del \u007f sep \u2028 ünï 😀',
    F_textarea: "",
    F_int: 2147483647,
    F_decimal: "12.345",
    F_boolean: true,
    F_date: "1969-07-20",
    F_datetime: "1969-12-31T23:59:59.999Z",
    F_time: "23:59:59.999",
    F_picklist: "High",
    F_multipicklist: ["A", "B"],
  },
  {
    F_string: "plain",
    F_int: -2147483648,
    F_decimal: "-0.5",
    F_boolean: false,
    F_datetime: "9999-12-31T23:59:59.999Z",
    F_multipicklist: [],
  },
  { F_string: null, F_int: 0, F_datetime: "0000-01-01T00:00:00.000Z" },
  { F_string: "offset", F_int: 1, F_datetime: "2024-02-29T12:00:00.5+02:00" },
];

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.provision("acme");
  principal = await t.auth.authenticate(`Bearer ${acme.adminToken}`);
  const defined = await t.call("POST", "/custom/standalone/schemas", {
    token: acme.adminToken,
    body: {
      name: "Everything",
      fields: CUSTOM_FIELD_TYPES.map((type) => {
        const options: Record<string, object> = {
          picklist: { items: ["Low", "High"] },
          multipicklist: { items: ["A", "B"] },
          reference: { referenceSchemaName: "Jobs" },
          decimal: { precision: 10, scale: 3 },
        };
        return { name: `F_${type}`, column: { type, ...options[type] } };
      }),
    },
  });
  expect(defined.status).toBe(200);

  const gql = graphqlClient(t, acme.adminToken);
  const created = await gql(`mutation { schema {
    n: insertRegions(input: {Name: "North", Timezone: "UTC"}, idAlias: "n")
    s: insertRegions(input: {Name: "South", Timezone: "Europe/Paris"}, idAlias: "s")
    v1: insertResources(input: {Name: "Van 1", PrimaryRegionId: "n"}, idAlias: "v1")
    v2: insertResources(input: {Name: "Van 2", PrimaryRegionId: "s"}, idAlias: "v2")
    acc: insertAccounts(input: {Name: "Acme"}, idAlias: "acc")
    ${Array.from(
      { length: 12 },
      (
        _,
        i,
      ) => `j${i}: insertJobs(input: {Duration: ${i % 5}, Description: "job ${i}", RegionId: "${i % 2 ? "n" : "s"}"${i % 4 === 3 ? ', AccountId: "acc"' : ""}}, idAlias: "j${i}")
      a${i}: insertJobAllocations(input: {JobId: "j${i}", ResourceId: "${i % 3 ? "v1" : "v2"}"})
      b${i}: insertJobAllocations(input: {JobId: "j${i}", ResourceId: "v1"})`,
    ).join("\n")}
  } }`);
  expect(created.errors).toBeUndefined();
  Object.assign(ids, created.data?.schema);
  for (const [i, input] of EVERYTHING.entries()) {
    const inserted = await gql(
      "mutation ($input: NewEverything!) { schema { insertEverything(input: $input) } }",
      {
        input: { ...input, F_referenceId: i < 2 ? ids.j1 : null },
      },
    );
    expect(inserted.errors).toBeUndefined();
  }

  const schemas = createTenantSchemas(t.store, t.config, () => {});
  const limits = documentLimits(t.config);
  const log = createLogger("silent");
  const readJson = t.store.readJson?.bind(t.store);
  if (!readJson) throw new Error("the SQLite store reads whole answers");
  engines = {
    "graphql-js": createGraphQLService(t.catalogues, schemas, limits, log, { jit: false }),
    "graphql-jit": createGraphQLService(t.catalogues, schemas, limits, log),
    store: createGraphQLService(t.catalogues, schemas, limits, log, {
      reads: createReadAnswers(readJson, limits, log),
    }),
  };
});
afterAll(() => t.close());

type Engine = keyof typeof engines;

/** The answers' text (each the same, or the test fails) and whether the store read it whole. */
async function answer(
  query: string,
  variables?: Record<string, unknown>,
  compared: Engine[] = ["graphql-js", "graphql-jit", "store"],
  operationName?: string,
) {
  const texts: Record<string, string> = {};
  let readWhole = false;
  // A later turn of the event loop, as a request is: its reads see what was written before it.
  await new Promise((resolve) => setImmediate(resolve));
  for (const name of compared) {
    // graphql-jit compiles only documents its cache keeps: one without variables from its second sighting.
    if (name === "graphql-jit") await engines[name].execute(principal, { query, variables, operationName });
    t.store.requestArrived();
    const { status, body } = await engines[name].execute(principal, { query, variables, operationName });
    expect(status).toBe(200);
    if (name === "store") readWhole = typeof body === "string";
    // Parsed and printed again: the same members in the same order print the same.
    texts[name] = JSON.stringify(typeof body === "string" ? JSON.parse(body) : body);
  }
  for (const name of compared) expect(texts[name]).toBe(texts[compared[0] as Engine] as string);
  return { text: texts.store as string, readWhole };
}

const ALL_FIELDS = `UID CreatedDate LastModifiedDate CreatedById ${CUSTOM_FIELD_TYPES.map((type) =>
  type === "reference" ? "F_referenceId F_reference { Name Duration }" : `F_${type}`,
).join(" ")}`;

describe("read whole by the store, the same as resolved", () => {
  const readable: [string, string, Record<string, unknown>?][] = [
    [
      "every field type, with totalCount, pageInfo and offsets",
      `{ everything(orderBy: "F_int DESC") { __typename totalCount pageInfo { hasNextPage hasPreviousPage __typename }
        edges { __typename offset node { __typename ${ALL_FIELDS} } } } }`,
    ],
    [
      "aliases, repeated fields merged, fragments and inline fragments",
      `fragment J on Jobs { Duration Region { UID } }
      { jobs(first: 5, orderBy: "Region.Name DESC, Duration") { edges { node { Name ...J n2: Name
        Region { Name } Region { Timezone } Account { Name } ... on Jobs { JobAllocations(limit: 1) { Resource { Name } } } } } } }`,
    ],
    [
      "a filter through a lookup, offset and a page short of the end",
      `{ jobs(filter: "Region.Name == 'North' AND Duration > 0", offset: 1, first: 2) {
        totalCount pageInfo { hasNextPage hasPreviousPage } edges { offset node { Description Duration } } } }`,
    ],
    [
      "an empty page and an empty list",
      `{ a: jobs(first: 0) { totalCount pageInfo { hasNextPage } edges { node { Name } } }
         b: jobs(filter: "Duration > 100") { totalCount pageInfo { hasNextPage hasPreviousPage } edges { node { Name } } } }`,
    ],
    [
      "reverse lists with filter, orderBy and limit, three levels deep",
      `{ regions(orderBy: "Name") { edges { node { Name
        Jobs(filter: "Duration >= 1", orderBy: "Duration DESC", limit: 3) { Description
          JobAllocations(orderBy: "Resource.Name DESC") { Resource { Name PrimaryRegion { Name } } } }
        none: Jobs(limit: 0) { Name } Resources { Name } } } } }`,
    ],
    [
      "records by UID, found and not, beside a list and the root's __typename",
      `query One($id: ID!) { __typename a: jobsById(UID: $id) { Description Region { Name } }
        b: jobsById(UID: "not-a-record") { Name } regions { totalCount } }`,
      { id: "j3" },
    ],
    [
      "variables in filter and first",
      `query Q($f: String, $n: Int) { jobs(filter: $f, first: $n) { edges { node { Description } } } }`,
      { f: "Duration < 2", n: 3 },
    ],
    [
      "the same document with other values",
      `query Q($f: String, $n: Int) { jobs(filter: $f, first: $n) { edges { node { Description } } } }`,
      { f: "Duration >= 3", n: 2 },
    ],
  ];
  for (const [name, query, variables] of readable) {
    test(name, async () => {
      const resolved = variables?.id ? { ...variables, id: ids[variables.id as string] } : variables;
      const { text, readWhole } = await answer(query, resolved);
      expect(readWhole).toBe(true);
      expect(text).not.toContain('"errors"');
    });
  }

  test("a root list merged from a fragment, in the second operation of a document", async () => {
    const query = `fragment Q on Query { jobs(first: 1) { edges { node { Description } } } }
      query B { ...Q }
      query A { ...Q jobs(first: 1) { edges { node { Duration } } } }`;
    await answer(query, undefined, undefined, "B");
    const { text } = await answer(query, undefined, undefined, "A");
    expect(JSON.parse(text).data.jobs.edges[0].node).toEqual({ Description: "job 0", Duration: 0 });
  });

  test("the text survives: escapes, non-BMP characters and instants come back as stored", async () => {
    const { text } = await answer(
      `{ everything(orderBy: "F_int DESC") { edges { node { F_string F_datetime F_int F_multipicklist } } } }`,
    );
    const nodes = JSON.parse(text).data.everything.edges.map((edge: { node: unknown }) => edge.node);
    expect(nodes).toEqual([
      {
        F_string: EVERYTHING[0]?.F_string,
        F_datetime: "1969-12-31T23:59:59.999Z",
        F_int: 2147483647,
        F_multipicklist: ["A", "B"],
      },
      { F_string: "offset", F_datetime: "2024-02-29T10:00:00.500Z", F_int: 1, F_multipicklist: null },
      { F_string: null, F_datetime: "0000-01-01T00:00:00.000Z", F_int: 0, F_multipicklist: null },
      { F_string: "plain", F_datetime: "9999-12-31T23:59:59.999Z", F_int: -2147483648, F_multipicklist: [] },
    ]);
  });
});

describe("what the store does not read whole is resolved, the same", () => {
  const resolved: [string, string][] = [
    ["cursors", `{ jobs(first: 2) { edges { cursor node { Name } } pageInfo { endCursor } } }`],
    ["a filter on NOW()", `{ jobs(filter: "CreatedDate < NOW()", first: 2) { edges { node { Name } } } }`],
    ["a directive", `{ jobs(first: 2) { edges { node { Name Duration @include(if: false) } } } }`],
    ["introspection", `{ __schema { queryType { name } } jobs(first: 1) { totalCount } }`],
    ["an argument the resolvers refuse", `{ jobs(first: 201) { edges { node { Name } } } }`],
    ["a filter that does not parse", `{ jobs(filter: "Duration >") { totalCount } }`],
  ];
  for (const [name, query] of resolved) {
    test(name, async () => {
      expect((await answer(query)).readWhole).toBe(false);
    });
  }

  // SQLite only: it writes behind the API's back through the SQLite file (its table found in sqlite_schema).
  test.skipIf(testEngine() !== "sqlite")(
    "a record breaking the schema's promises is answered with the resolvers' errors",
    async () => {
      const query = `{ everything(orderBy: "F_int") { edges { node { F_string F_int CreatedDate } } } }`;
      expect((await answer(query)).readWhole).toBe(true);
      // Written behind the API's back: an Int past 32 bits, then no value in a NOT NULL system field.
      const write = (statement: string) => {
        const db = new Database(join(t.dataDir, "store.sqlite"));
        const { name } = db
          .query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE '%everything'")
          .get() as { name: string };
        expect(db.run(statement.replace("TABLE", `"${name}"`)).changes).toBe(1);
        db.close();
      };
      write(`UPDATE TABLE SET "__f_int" = 4294967296 WHERE "__f_int" = 0`);
      const wide = await answer(query);
      expect(wide.readWhole).toBe(false);
      expect(wide.text).toContain("Int cannot represent non 32-bit signed integer value");
      write(`UPDATE TABLE SET "__f_int" = 0, "created_date" = NULL WHERE "__f_int" = 4294967296`);
      // graphql-js reports this one as an internal error (with a fresh errorId), graphql-jit names the field.
      const empty = await answer(query, undefined, ["graphql-jit", "store"]);
      expect(empty.readWhole).toBe(false);
      expect(empty.text).toContain("Cannot return null for non-nullable field");
    },
  );
});
