/**
 * Cursors come back from clients: one edited to fit no row of its order (a value of the wrong
 * type or out of range for the term it continues, a NULL UID, another count of values) is
 * refused as any cursor this query did not make (VALIDATION_FAILED, "invalid cursor"), on every
 * engine and before any statement runs, never an internal error; a genuine one still pages.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../../support/app.ts";
import { graphqlClient } from "../../support/graphql.ts";

let t: TestApp;
let acme: ProvisionedTenant;
let gql: ReturnType<typeof graphqlClient>;
const JOBS = 9;

beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: "error" });
  acme = await t.provision("acme");
  gql = graphqlClient(t, acme.adminToken);
  for (const [name, column] of [
    ["Num", { type: "int" }],
    ["Dec", { type: "decimal", precision: 18, scale: 2 }],
  ] as const) {
    const added = await t.call("POST", "/custom/standalone/fields", {
      token: acme.adminToken,
      body: { schemaName: "Jobs", name, column },
    });
    expect(added.status).toBe(200);
  }
  const region = await gql(`mutation { schema { insertRegions(input: {Name: "N", Timezone: "UTC"}) } }`);
  const regionId = (region.data as { schema: { insertRegions: string } }).schema.insertRegions;
  // Pairs of equal keys, and one job without any, so pages break inside ties and at NULLs.
  const jobs = Array.from({ length: JOBS }, (_, i) => {
    const k = Math.floor(i / 2);
    const values =
      i === JOBS - 1
        ? ""
        : `, Num: ${k * 1000}, Dec: "${k}.25", Description: "d${k}", Start: "2024-05-0${k + 1}T10:00:00Z"`;
    return `j${i}: insertJobs(input: {RegionId: "${regionId}", Duration: ${i}${values}})`;
  });
  const inserted = await gql(`mutation { schema { ${jobs.join("\n")} } }`);
  expect(inserted.errors).toBeUndefined();
});
afterAll(() => t.close());

type Page = { edges: { node: { UID: string } }[]; pageInfo: { endCursor: string | null } };

const page = async (orderBy: string, first: number, after: string | null) => {
  const answer = await gql(
    `query($after: String) { jobs(orderBy: "${orderBy}", first: ${first}, after: $after) { edges { node { UID } } pageInfo { endCursor } } }`,
    { after },
  );
  return { page: (answer.data?.jobs ?? null) as Page | null, errors: answer.errors };
};

const uidsOf = (p: Page | null) => p?.edges.map((edge) => edge.node.UID) ?? [];

/** The JSON a cursor carries: its order's fingerprint, then the key. */
const openCursor = (cursor: string) =>
  JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
const sealCursor = (values: unknown[]) => Buffer.from(JSON.stringify(values)).toString("base64url");

const ORDERS: [string, unknown[]][] = [
  ["Num DESC", ["99999999999999999999999", "abc", "1e5", 1.5, "x", true]],
  ["Dec DESC", ["abc", "1.25", true, { n: 1 }]],
  ["Description DESC", [5, true, ["d1"]]],
  ["Start DESC", ["2024-05-01T10:00:00Z", "abc", 1.5, "99999999999999999999999"]],
];

describe.each(ORDERS)("orderBy %p", (orderBy, forgedValues) => {
  test("a genuine cursor pages through every job once, in the order of one read", async () => {
    const whole = uidsOf((await page(orderBy, JOBS, null)).page);
    expect(whole.length).toBe(JOBS);
    const paged: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < JOBS; i += 2) {
      const { page: next, errors } = await page(orderBy, 2, after);
      expect(errors).toBeUndefined();
      paged.push(...uidsOf(next));
      after = next?.pageInfo.endCursor ?? null;
    }
    expect(paged).toEqual(whole);
  });

  test("a cursor edited to carry a value the order field cannot hold is VALIDATION_FAILED", async () => {
    const genuine = (await page(orderBy, 2, null)).page?.pageInfo.endCursor as string;
    const [fingerprint, , uid] = openCursor(genuine);
    const forged = [
      ...forgedValues.map((value) => [fingerprint, value, uid]),
      // The UID of the wrong type, or NULL; the key NULL with a number for the UID.
      [fingerprint, null, 5],
      [fingerprint, null, null],
      [fingerprint, null, "not-a-uid"],
      // Too few and too many values; not a list at all.
      [fingerprint, uid],
      [fingerprint, null, uid, uid],
      { fingerprint },
    ];
    for (const values of forged) {
      const { page: answered, errors } = await page(orderBy, 2, sealCursor(values as unknown[]));
      expect({ values, answered, code: errors?.[0]?.extensions.code, message: errors?.[0]?.message }).toEqual(
        {
          values,
          answered: null,
          code: "VALIDATION_FAILED",
          message: expect.stringMatching(/^invalid cursor/),
        },
      );
    }
  });
});
