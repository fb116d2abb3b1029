/**
 * The store copy-store.test.ts copies, built through the app (REST and GraphQL, as clients build
 * one), and the requests whose answers must come out the same on every copy of it.
 */
import { expect } from "bun:test";
import type { ProvisionedTenant, TestApp } from "../support/app.ts";
import { graphqlClient } from "../support/graphql.ts";

export interface World {
  acme: ProvisionedTenant;
  globex: ProvisionedTenant;
  /** The webhook on Jobs inserts, POSTing to `/jobs`, and its signing secret. */
  jobsHook: { id: string; secret: string };
  /** A token of acme's, revoked. */
  revokedToken: string;
  /** The plaintext of acme's secret config variable API_KEY (the Jobs webhook's X-Api-Key header). */
  apiKey: string;
  /** Inserts an acme Job through `t`'s GraphQL; returns its generated Name. */
  insertJob(t: TestApp, description: string): Promise<string>;
  /** Every answer of the requests compared across copies, in order: [what, status, body]. */
  answers(t: TestApp): Promise<[string, number, unknown][]>;
}

/** Values at the edges of each type, nulls, escapes and text beyond ASCII. */
const GADGETS = [
  `{Code: "G-1", Notes: "line one\\nline \\"two\\" \\\\ ünï 😀", Site: "https://example.com/a?b=c", Count: 2147483647,
    Price: "12345678.25", Active: true, Day: "2024-02-29", At: "2024-05-01T10:00:00.123Z", Clock: "23:59:59.999",
    Kind: "Small", Tags: ["red", "blue"]}`,
  `{Code: "G-2", Notes: "", Count: -2147483648, Price: "-0.5", Active: false, Day: "0001-01-01",
    At: "1969-12-31T23:59:59.999Z", Clock: "00:00:00.000", Kind: "Large", Tags: [], ParentId: "g1"}`,
  `{Code: "G-3", Price: "1.5", Tags: ["green"], ParentId: "g2"}`,
  `{Code: "g-0"}`,
];

export async function copyStoreWorld(t: TestApp, receiverUrl: string): Promise<World> {
  const acme = await t.provision("acme");
  const globex = await t.provision("globex");
  const as = (tenant: ProvisionedTenant) => (method: string, path: string, body?: unknown) =>
    t.call(method, path, { token: tenant.adminToken, body });
  const admin = as(acme);
  const ok = async (answer: Promise<{ status: number; body: unknown }>) => {
    const { status, body } = await answer;
    expect(status, JSON.stringify(body)).toBeLessThan(300);
    return body as { result: Record<string, unknown> };
  };

  await ok(
    admin("POST", "/custom/standalone/schemas", {
      name: "Gadgets",
      label: "Gadgets",
      fields: [
        { name: "Code", column: { type: "string", unique: true } },
        { name: "Notes", column: { type: "textarea" } },
        { name: "Site", column: { type: "url" } },
        { name: "Count", column: { type: "int" } },
        { name: "Price", column: { type: "decimal", precision: 12, scale: 2 } },
        { name: "Active", column: { type: "boolean" } },
        { name: "Day", column: { type: "date" } },
        { name: "At", column: { type: "datetime" } },
        { name: "Clock", column: { type: "time" } },
        { name: "Kind", column: { type: "picklist", items: ["Small", "Large"] } },
        { name: "Tags", column: { type: "multipicklist", items: ["red", "green", "blue"] } },
        { name: "Parent", column: { type: "reference", referenceSchemaName: "Gadgets" } },
      ],
    }),
  );
  await ok(
    admin("POST", "/custom/standalone/fields", {
      schemaName: "Jobs",
      name: "Gadget",
      column: { type: "reference", referenceSchemaName: "Gadgets" },
    }),
  );
  await ok(
    admin("POST", "/custom/standalone/fields", {
      schemaName: "Gadgets",
      name: "Rank",
      column: { type: "int", defaultValue: 3 },
    }),
  );

  const gql = graphqlClient(t, acme.adminToken);
  const created = await gql(`mutation { schema {
    north: insertRegions(input: {Name: "North", Timezone: "UTC"}, idAlias: "north")
    south: insertRegions(input: {Name: "Süd", Timezone: "Europe/Berlin"}, idAlias: "south")
    ${GADGETS.map((input, i) => `g${i + 1}: insertGadgets(input: ${input}, idAlias: "g${i + 1}")`).join("\n")}
    job: insertJobs(input: {Duration: 30, RegionId: "north", GadgetId: "g1", Description: "first",
      Start: "2024-05-01T08:00:00.000Z"})
  } }`);
  expect(created.errors).toBeUndefined();
  const ids = created.data?.schema as Record<string, string>;
  // A cycle (G-1 → G-3 → G-2 → G-1): whatever order a copy writes them in, one points ahead.
  const cycle = await gql(
    `mutation { schema { updateGadgets(input: {UID: "${ids.g1}", ParentId: "${ids.g3}"}) } }`,
  );
  expect(cycle.errors).toBeUndefined();
  const globexGql = graphqlClient(t, globex.adminToken);
  expect(
    (await globexGql(`mutation { schema { insertRegions(input: {Name: "East", Timezone: "UTC"}) } }`)).errors,
  ).toBeUndefined();

  // Tokens: a scheduler's, an expiring one, a revoked one.
  const scheduler = await t.addUser(acme.tenant.id, ["scheduler"]);
  const expiry = new Date(Date.now() + 30 * 86_400_000).toISOString();
  await ok(admin("POST", "/auth/token", { expiry, description: "expires" }));
  const revoked = await ok(admin("POST", "/auth/token", { description: "revoked" }));
  await ok(admin("DELETE", `/auth/token/${revoked.result.jti}`));

  const apiKey = "k-secret-123";
  await ok(
    admin("POST", "/configuration/extension", { key: "API_KEY", value: apiKey, configType: "secret" }),
  );
  await ok(admin("POST", "/configuration/extension", { key: "HOST", value: "hooks.example.com" }));

  const jobsHook = await ok(
    admin("POST", "/webhooks", {
      name: "jobs",
      url: `${receiverUrl}/jobs`,
      type: "graphql",
      query: "subscription { schemaJobs(operation: INSERT) { operation data { UID Name Description } } }",
      headers: { "X-Api-Key": "{{ API_KEY }}" },
    }),
  );
  const regionsHook = await ok(
    admin("POST", "/webhooks", {
      name: "regions",
      url: `${receiverUrl}/regions`,
      type: "graphql",
      query: "subscription { schemaRegions { operation data { Name } } }",
    }),
  );
  await ok(admin("POST", `/webhooks/${regionsHook.result.id}/secret/rotate`, { graceSeconds: 3600 }));
  await ok(
    admin("POST", "/webhooks", {
      name: "gadgets-later",
      url: `${receiverUrl}/later`,
      type: "graphql_deferred",
      field: "CreatedDate",
      offset: 86_400_000,
      query: "subscription { gadgets { UID Code Parent { Code } } }",
      filter: "Active == true",
    }),
  );
  await ok(
    as(globex)("POST", "/webhooks", {
      name: "yearly",
      url: `${receiverUrl}/yearly`,
      type: "scheduled",
      cron: "0 0 1 1 *",
    }),
  );

  return {
    acme,
    globex,
    jobsHook: { id: jobsHook.result.id as string, secret: jobsHook.result.secret as string },
    revokedToken: revoked.result.token as string,
    apiKey,
    async insertJob(app, description) {
      const answer = await graphqlClient(
        app,
        acme.adminToken,
      )(
        `mutation { schema { insertJobs(input: {Duration: 15, RegionId: "${ids.north}", Description: "${description}"}) } }`,
      );
      expect(answer.errors).toBeUndefined();
      const uid = (answer.data?.schema as { insertJobs?: string } | undefined)?.insertJobs;
      const read = await graphqlClient(app, acme.adminToken)(`{ jobsById(UID: "${uid}") { Name } }`);
      return String((read.data?.jobsById as { Name?: string } | undefined)?.Name);
    },
    answers: (app) => answersOf(app, [acme, globex], scheduler.token, revoked.result.token as string),
  };
}

/** The requests compared across copies: GraphQL reads of every kind, and the REST reads of each resource. */
const ACME_QUERIES = [
  `{ jobs(orderBy: "Name DESC") { totalCount edges { cursor offset node { UID Name Description JobStatus Duration Start
      CreatedDate LastModifiedDate CreatedById LastModifiedById RegionId Region { Name } GadgetId Gadget { Code Rank } } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
  `{ gadgets(orderBy: "Price DESC, Code ASC") { totalCount edges { cursor node { UID Code Notes Site Count Price Active
      Day At Clock Kind Tags Rank ParentId Parent { Code } CreatedBy { Email } } } } }`,
  `{ a: gadgets(filter: "Price >= 1.5 AND Tags INCLUDES 'red'") { totalCount edges { node { Code } } }
     b: gadgets(filter: "At > 2024-01-01T00:00:00.000Z OR Day == null", orderBy: "At ASC") { edges { node { Code } } }
     c: gadgets(filter: "Notes LIKE '%ÜNÏ%' OR Code LIKE 'g%'") { edges { node { Code } } }
     d: jobs(filter: "Gadget.Code == 'G-1'") { totalCount }
     e: gadgets(orderBy: "Parent.Code DESC, Kind ASC") { edges { node { Code } } } }`,
  `{ gadgets(first: 2, offset: 1) { edges { cursor node { Code } } pageInfo { hasNextPage endCursor } } }`,
  `{ regions(orderBy: "Name ASC") { edges { node { Name Timezone Jobs { Name Gadget { Code } } } } } }`,
  `{ users(orderBy: "LastName ASC, Email DESC") { totalCount edges { node { UID FirstName LastName Email IsActive UserTypes
      CreatedDate } } } }`,
  `{ __type(name: "Gadgets") { fields { name type { kind name ofType { name } } } } }`,
];
/** Globex has no custom definitions. */
const GLOBEX_QUERIES = [
  `{ regions { edges { cursor node { UID Name Timezone CreatedDate CreatedBy { Email } } } } }`,
  `{ users { edges { node { UID LastName Email UserTypes } } } }`,
  `{ __type(name: "Jobs") { fields { name } } }`,
];

async function answersOf(
  t: TestApp,
  tenants: readonly ProvisionedTenant[],
  schedulerToken: string,
  revokedToken: string,
): Promise<[string, number, unknown][]> {
  const answers: [string, number, unknown][] = [];
  const get = async (what: string, path: string, token: string) => {
    const { status, body } = await t.call("GET", path, { token });
    answers.push([what, status, body]);
    return body;
  };
  for (const tenant of tenants) {
    const token = tenant.adminToken;
    const name = tenant.tenant.name;
    let after: string | undefined;
    const queries = tenant === tenants[0] ? ACME_QUERIES : GLOBEX_QUERIES;
    for (const [i, query] of queries.entries()) {
      const { status, body } = await t.call("POST", "/graphql/graphql", { token, body: { query } });
      answers.push([`${name} query ${i}`, status, body]);
      after ??= (body as { data?: { gadgets?: { pageInfo?: { endCursor?: string } } } }).data?.gadgets
        ?.pageInfo?.endCursor;
    }
    // Pages on from the cursor an answer handed out: cursors stay valid on every copy.
    if (after) {
      const query = `{ gadgets(first: 2, after: "${after}") { edges { node { Code } } } }`;
      const { status, body } = await t.call("POST", "/graphql/graphql", { token, body: { query } });
      answers.push([`${name} next page`, status, body]);
    }
    await get(`${name} whoami`, "/auth/whoami", token);
    await get(`${name} tokens`, "/auth/tokens", token);
    await get(`${name} custom schemas`, "/custom/schemas", token);
    await get(`${name} SDL`, "/graphql/schema", token);
    await get(`${name} deferred schema`, "/webhooks/deferred/schema", token);
    await get(`${name} config variables`, "/configuration/extension", token);
    await get(`${name} API_KEY`, "/configuration/extension/API_KEY", token);
    const hooks = (await get(`${name} webhooks`, "/webhooks", token)) as { result: { id: string }[] };
    for (const hook of hooks.result) {
      await get(`${name} webhook`, `/webhooks/${hook.id}`, token);
      const listed = (await get(`${name} deliveries`, `/webhooks/${hook.id}/deliveries`, token)) as {
        result: { id: string }[];
      };
      for (const delivery of listed.result)
        await get(`${name} delivery`, `/webhooks/${hook.id}/deliveries/${delivery.id}`, token);
    }
  }
  await get("scheduler whoami", "/auth/whoami", schedulerToken);
  await get("revoked whoami", "/auth/whoami", revokedToken);
  return answers;
}
