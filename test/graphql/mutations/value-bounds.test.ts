/** Numbers a field cannot keep exactly are refused, never rounded: Duration, Int, BigDecimal, and EQL durations. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_DURATION_MINUTES } from "../../../api/model/field-values.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../../support/app.ts";
import { changeLog, graphqlClient } from "../../support/graphql.ts";

let t: TestApp;
let acme: ProvisionedTenant;
let gql: ReturnType<typeof graphqlClient>;
let regionId = "";

beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: "error" });
  acme = await t.provision("acme");
  gql = graphqlClient(t, acme.adminToken);
  for (const [name, column] of [
    ["Day", { type: "date" }],
    ["Big", { type: "int" }],
    ["Amount", { type: "decimal", precision: 38, scale: 2 }],
  ] as const) {
    const added = await t.call("POST", "/custom/standalone/fields", {
      token: acme.adminToken,
      body: { schemaName: "Jobs", name, column },
    });
    expect(added.status).toBe(200);
  }
  const region = await gql(`mutation { schema { insertRegions(input: {Name: "N", Timezone: "UTC"}) } }`);
  regionId = (region.data as { schema: { insertRegions: string } }).schema.insertRegions;
});
afterAll(() => t.close());

/** Jobs stored and change-log entries: a refused mutation changes neither. */
const footprint = async () => ({
  jobs: ((await gql("{ jobs { totalCount } }")).data as { jobs: { totalCount: number } }).jobs.totalCount,
  log: (await changeLog(t, acme.tenant.id)).length,
});

const VARIABLE_TYPES: Record<string, string> = { d: "Duration", i: "Int" };
/** Inserts a job with `values`; the variables given are declared with their types. */
const insertJob = (values: string, variables?: Record<string, unknown>) => {
  const declared = Object.keys(variables ?? {}).map((name) => `$${name}: ${VARIABLE_TYPES[name]}`);
  const signature = declared.length > 0 ? `(${declared.join(", ")})` : "";
  return gql(
    `mutation${signature} { schema { insertJobs(input: {RegionId: "${regionId}", ${values}}) } }`,
    variables,
  );
};

const readJob = async (uid: string) =>
  (
    (await gql(`{ jobsById(UID: "${uid}") { Duration Big Amount } }`)).data as {
      jobsById: Record<string, unknown>;
    }
  ).jobsById;

describe("Duration (whole minutes, at most 2^31 − 1)", () => {
  test("the bound is a GraphQL Int, and exact in ms", () => {
    expect(MAX_DURATION_MINUTES).toBe(2_147_483_647);
    expect(Number.isSafeInteger(MAX_DURATION_MINUTES * 60_000)).toBe(true);
  });

  // Rows as objects: bun passes a `done` callback to callbacks declaring more parameters than a row has.
  const tooLong: { name: string; values: string; vars?: Record<string, unknown> }[] = [
    { name: "literal 2^31", values: "Duration: 2147483648" },
    { name: "literal past 2^53 (would round)", values: "Duration: 9007199254740993" },
    { name: "literal of 20 digits", values: "Duration: 99999999999999999999" },
    { name: "variable 2^31", values: "Duration: $d", vars: { d: 2_147_483_648 } },
    { name: "variable 1e20", values: "Duration: $d", vars: { d: 1e20 } },
  ];
  test.each(tooLong)("$name is refused with a clear error; nothing is written", async ({ values, vars }) => {
    const before = await footprint();
    const result = await insertJob(values, vars);
    expect(result.data ?? null).toBeNull();
    // A bad scalar, like a negative Duration (mutations.test.ts "bad scalars").
    expect(result.errors?.[0]?.extensions.code).toBe("GRAPHQL_VALIDATION_FAILED");
    // Literals and variables say why (mutations run on graphql-js, which keeps the scalar's reason).
    expect(result.errors?.[0]?.message).toContain(`minutes from 0 to ${MAX_DURATION_MINUTES}`);
    expect(await footprint()).toEqual(before);
  });

  test("the schema tells the range", async () => {
    const sdl = (await t.call("GET", "/graphql/schema", { token: acme.adminToken })).body as string;
    expect(sdl).toContain(`A duration in whole minutes, from 0 to ${MAX_DURATION_MINUTES}`);
  });

  test("the longest Duration is stored and read back exactly", async () => {
    const result = await insertJob(`Duration: ${MAX_DURATION_MINUTES}`);
    expect(result.errors).toBeUndefined();
    const uid = (result.data as { schema: { insertJobs: string } }).schema.insertJobs;
    expect((await readJob(uid)).Duration).toBe(MAX_DURATION_MINUTES);
  });
});

describe("Int and BigDecimal", () => {
  test("an Int field refuses values past 32 bits (GraphQL Int), nothing written", async () => {
    const before = await footprint();
    for (const [values, vars] of [
      ["Duration: 1, Big: 2147483648", undefined],
      ["Duration: 1, Big: $i", { i: 2 ** 53 + 2 }],
    ] as const) {
      const result = await insertJob(values, vars);
      expect(result.data ?? null).toBeNull();
      expect(result.errors?.[0]?.extensions.code).toBe("GRAPHQL_VALIDATION_FAILED");
      expect(result.errors?.[0]?.message).toContain("32-bit");
    }
    expect(await footprint()).toEqual(before);
    const ok = await insertJob("Duration: 1, Big: -2147483648");
    const uid = (ok.data as { schema: { insertJobs: string } }).schema.insertJobs;
    expect((await readJob(uid)).Big).toBe(-2_147_483_648);
  });

  test("an int field's default must be a 32-bit integer, or the records taking it could not be read", async () => {
    const refused = await t.call("POST", "/custom/standalone/fields", {
      token: acme.adminToken,
      body: { schemaName: "Jobs", name: "Huge", column: { type: "int", defaultValue: 2 ** 31 } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errorType).toBe("validation_failed");
    expect(refused.body.details[0].path).toBe("column.defaultValue");
    const accepted = await t.call("POST", "/custom/standalone/fields", {
      token: acme.adminToken,
      body: { schemaName: "Jobs", name: "Largest", column: { type: "int", defaultValue: 2 ** 31 - 1 } },
    });
    expect(accepted.status).toBe(200);
    const job = await insertJob("Duration: 1");
    const uid = (job.data as { schema: { insertJobs: string } }).schema.insertJobs;
    const read = await gql(`{ jobsById(UID: "${uid}") { Largest } }`);
    expect(read).toEqual({ data: { jobsById: { Largest: 2 ** 31 - 1 } } });
  });

  test("a decimal keeps all its digits; one digit past its precision is refused", async () => {
    const exact = "123456789012345678901234567890123456.78";
    const ok = await insertJob(`Duration: 1, Amount: "${exact}"`);
    const uid = (ok.data as { schema: { insertJobs: string } }).schema.insertJobs;
    expect((await readJob(uid)).Amount).toBe(exact);
    const before = await footprint();
    const refused = await insertJob(`Duration: 1, Amount: "1${exact}"`);
    expect(refused.errors?.[0]?.extensions.code).toBe("VALIDATION_FAILED");
    expect(await footprint()).toEqual(before);
  });
});

describe("EQL durations and NOW() offsets", () => {
  test("past the longest Duration: FILTER_PARSE_ERROR at the amount, not an internal error", async () => {
    for (const filter of [
      "Day > NOW() + 99999999999 d",
      "Start < NOW() - 99999999999999 h",
      "Duration > 99999999999999999999 minutes",
    ]) {
      const result = await gql(`{ jobs(filter: "${filter}") { totalCount } }`);
      expect(result.data ?? null).toBeNull();
      const error = result.errors?.[0];
      expect({ filter, code: error?.extensions.code }).toEqual({ filter, code: "FILTER_PARSE_ERROR" });
      const at = filter.search(/\d/);
      expect(error?.extensions.position).toEqual({ offset: at, line: 1, column: at + 1 });
      expect(error?.extensions.expected).toBe(`a duration of at most ${MAX_DURATION_MINUTES} minutes`);
    }
  });

  test("up to it, they filter", async () => {
    const result = await gql(
      `{ jobs(filter: "Day < NOW() + 1491308 d AND Duration <= ${MAX_DURATION_MINUTES} minutes") { totalCount } }`,
    );
    expect(result.errors).toBeUndefined();
  });
});
