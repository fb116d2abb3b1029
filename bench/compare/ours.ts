/**
 * Our service as a system under test: the real API process pinned to the
 * server core (its private Redis pinned there too), on SQLite or on a database
 * of its own in the private PostgreSQL cluster, the dataset loaded through the
 * public API only, the same way on both engines (one REST call for the upsert
 * key, then GraphQL mutations of at most 100 aliased inserts with values in
 * variables).
 */
import { join } from "node:path";
import { residentMiB, startApiProcess } from "../support.ts";
import { deferStop } from "./cleanup.ts";
import {
  accountRow,
  allocationRows,
  contactRow,
  indexes,
  jobRow,
  regionRow,
  resourceRow,
  SIZES,
} from "./dataset.ts";
import { findPidsIn, pinProcess, pssMiB } from "./memory.ts";
import type { PrivatePostgres } from "./postgres.ts";
import { graphqlBody, type SystemUnderTest } from "./system.ts";

/** Where our store is: SQLite in the API's data directory, or a database `ours` on the peers' cluster. */
export type OurStore = { engine: "sqlite" } | { engine: "postgres"; postgres: PrivatePostgres };

/** Our database on the private cluster. */
const OUR_DATABASE = "ours";

type Graphql = (query: string, variables?: Record<string, unknown>) => Promise<Record<string, string>>;

/** Starts our API on `core` over `store`, loads the dataset and returns the workloads. */
export async function startOurs(core: number, store: OurStore): Promise<SystemUnderTest> {
  const postgres = store.engine === "postgres" ? store.postgres : null;
  if (postgres) await postgres.createDatabase(OUR_DATABASE);
  const api = await startApiProcess(core, postgres ? { DATABASE_URL: postgres.url(OUR_DATABASE) } : {});
  const stop = deferStop(`our API (${store.engine})`, async () => {
    await api.stop();
    if (postgres) await dropDatabase(postgres, OUR_DATABASE);
  });
  const redisPids = findPidsIn("redis-server", join(api.dataDir, "redis"));
  for (const pid of redisPids) pinProcess(pid, core);

  const field = await api.call("POST", "/custom/standalone/fields", {
    schemaName: "Accounts",
    name: "ExternalId",
    column: { type: "string", unique: true },
  });
  if (field.status !== 200) throw new Error(`creating Accounts.ExternalId answered ${field.status}`);
  let resent = 0;
  // A document is one unit of work, all or nothing: one answered UNAVAILABLE (on PostgreSQL, a unit
  // that failed to serialize 20 times beside the other batch in flight) wrote nothing and is sent
  // again, as its message advises a client to do. Counted and reported.
  const graphql: Graphql = async (query, variables) => {
    for (let attempt = 1; ; attempt++) {
      const answer = await api.call("POST", "/graphql/graphql", { query, variables });
      const errors = answer.body.errors as { extensions?: { code?: string } }[] | undefined;
      if (!errors) return (answer.body.data as { schema: Record<string, string> }).schema;
      const unavailable = errors.every((e) => e.extensions?.code === "UNAVAILABLE");
      if (!unavailable || attempt === 10) throw new Error(`our API: ${JSON.stringify(errors).slice(0, 500)}`);
      resent++;
      await Bun.sleep(10 + Math.random() * 40);
    }
  };
  const started = performance.now();
  const refs = await loadReferences(graphql);
  await loadJobs(graphql, refs);
  const seconds = (performance.now() - started) / 1000;
  if (postgres) await settle(postgres);

  const region = refs.regions[0];
  const ops = indexes(10);
  return {
    name: postgres ? "ours on PostgreSQL" : "ours on SQLite",
    ours: store.engine,
    url: `${api.base}/graphql/graphql`,
    headers: { Authorization: `Bearer ${api.token}` },
    bodies: {
      W1: graphqlBody(
        `{ jobs(filter: "JobStatus == 'Dispatched' AND Duration > 30", first: 20) { edges { node { Name Duration JobStatus Start Description } } } }`,
      ),
      W2: graphqlBody(
        "{ jobs(first: 20) { edges { node { Name Region { Name } JobAllocations(limit: 20) { Resource { Name } } } } } }",
      ),
      W3: graphqlBody(
        `mutation Insert($d: String) { schema { insertJobs(input: {Duration: 30, JobStatus: "Queued", RegionId: "${region}", Description: $d}) } }`,
        { d: "W3 %n" },
      ),
      W4: graphqlBody(
        `mutation Upsert(${ops.map((i) => `$k${i}: String`).join(", ")}) { schema { ${ops
          .map(
            (i) => `u${i}: upsertAccounts(input: {ExternalId: $k${i}, Name: "W4"}, keyField: "ExternalId")`,
          )
          .join(" ")} } }`,
        Object.fromEntries(ops.map((i) => [`k${i}`, `W4-%n-${i}`])),
      ),
    },
    load: {
      route: `GraphQL mutations, ≤ 100 aliased inserts each, values in variables, two in flight${resent > 0 ? `; ${resent} answered UNAVAILABLE (could not serialize) and were sent again` : ""}`,
      seconds,
    },
    memory: () => {
      const redisMiB = redisPids.reduce((sum, pid) => sum + residentMiB(pid), 0);
      return postgres
        ? {
            serverMiB: residentMiB(api.pid),
            storeMiB: redisMiB + pssMiB(postgres.pids()),
            storeLabel: "Redis RSS + PostgreSQL, PSS of all its processes",
          }
        : {
            serverMiB: residentMiB(api.pid),
            storeMiB: redisMiB,
            storeLabel: "Redis RSS; the records live in SQLite inside the API process",
          };
    },
    pids: () => [api.pid, ...redisPids, ...(postgres?.pids() ?? [])],
    stop,
  };
}

/**
 * Inserts `count` records of `object`, 100 aliases per mutation, each input a variable
 * (type `New<object>`); returns the new UIDs in row order.
 */
async function insertAll(
  graphql: Graphql,
  object: string,
  count: number,
  input: (i: number) => Record<string, unknown>,
): Promise<string[]> {
  const ids: string[] = [];
  for (let from = 0; from < count; from += 100) {
    const slots = indexes(Math.min(100, count - from));
    const data = await graphql(
      `mutation Load(${slots.map((s) => `$r${s}: New${object}!`).join(", ")}) { schema { ${slots
        .map((s) => `r${s}: insert${object}(input: $r${s})`)
        .join(" ")} } }`,
      Object.fromEntries(slots.map((s) => [`r${s}`, input(from + s)])),
    );
    ids.push(...slots.map((s) => data[`r${s}`] ?? ""));
  }
  return ids;
}

interface References {
  regions: string[];
  accounts: string[];
  contacts: string[];
  resources: string[];
}

/** Regions, Accounts, Contacts, Resources; returns their UIDs by dataset index. */
async function loadReferences(graphql: Graphql): Promise<References> {
  const regions = await insertAll(graphql, "Regions", SIZES.regions, (i) => {
    const r = regionRow(i);
    return { Name: r.name, Timezone: r.timezone, Description: r.description, CountryCode: r.countryCode };
  });
  const accounts = await insertAll(graphql, "Accounts", SIZES.accounts, (i) => {
    const a = accountRow(i);
    return { Name: a.name, ExternalId: a.externalId, Phone: a.phone, BillingCity: a.billingCity };
  });
  const contacts = await insertAll(graphql, "Contacts", SIZES.contacts, (i) => {
    const c = contactRow(i);
    return {
      FirstName: c.firstName,
      LastName: c.lastName,
      Email: c.email,
      Title: c.title,
      AccountId: accounts[c.account],
      RegionId: regions[c.region],
    };
  });
  const resources = await insertAll(graphql, "Resources", SIZES.resources, (i) => {
    const r = resourceRow(i);
    return {
      Name: r.name,
      PrimaryRegionId: regions[r.primaryRegion],
      Category: r.category,
      ResourceType: r.resourceType,
      Rating: r.rating,
    };
  });
  return { regions, accounts, contacts, resources };
}

/** Jobs per mutation: 40 Jobs and their 60 allocations make 100 aliases. */
const JOBS_PER_MUTATION = 40;

/**
 * The one document that loads every batch: slot s inserts a Job named by idAlias `j<s>`,
 * then its allocations, which reference it by that alias. Batches start at multiples of
 * 40, so slot s has as many allocations as dataset Job s.
 */
function jobBatchDocument(): string {
  const slots = indexes(JOBS_PER_MUTATION);
  const allocations = (s: number) => allocationRows(s).map((_, k) => `a${s}_${k}`);
  const declarations = slots.flatMap((s) => [
    `$j${s}: NewJobs!`,
    ...allocations(s).map((a) => `$${a}: NewJobAllocations!`),
  ]);
  const operations = slots.flatMap((s) => [
    `j${s}: insertJobs(input: $j${s}, idAlias: "j${s}")`,
    ...allocations(s).map((a) => `${a}: insertJobAllocations(input: $${a})`),
  ]);
  return `mutation Load(${declarations.join(", ")}) { schema { ${operations.join(" ")} } }`;
}

function jobBatchVariables(from: number, refs: References): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  for (const s of indexes(JOBS_PER_MUTATION)) {
    const job = jobRow(from + s);
    variables[`j${s}`] = {
      Description: job.description,
      JobStatus: job.jobStatus,
      Urgency: job.urgency,
      Start: job.start,
      End: job.end,
      Duration: job.duration,
      RegionId: refs.regions[job.region],
      AccountId: refs.accounts[job.account],
      ContactId: job.contact === null ? null : refs.contacts[job.contact],
    };
    allocationRows(from + s).forEach((a, k) => {
      variables[`a${s}_${k}`] = {
        JobId: `j${s}`,
        ResourceId: refs.resources[a.resource],
        Status: a.status,
        TeamLeader: a.teamLeader,
      };
    });
  }
  return variables;
}

/** Loads every Job with its allocations: the first batch alone (so the first Jobs by UID are the dataset's first), then two in flight. */
async function loadJobs(graphql: Graphql, refs: References): Promise<void> {
  const document = jobBatchDocument();
  await graphql(document, jobBatchVariables(0, refs));
  const starts = indexes(SIZES.jobs / JOBS_PER_MUTATION - 1).map((k) => (k + 1) * JOBS_PER_MUTATION);
  const next = async (): Promise<void> => {
    const from = starts.shift();
    if (from === undefined) return;
    await graphql(document, jobBatchVariables(from, refs));
    return next();
  };
  await Promise.all([next(), next()]);
}

/**
 * Waits (at most a minute) until no autovacuum worker runs: loading 250,000 records sets off
 * autovacuum and autoanalyze, and work left over would run beside the measurements. The bench
 * only waits; it runs no VACUUM or ANALYZE itself (an operator of our service would not).
 */
async function settle(postgres: PrivatePostgres): Promise<void> {
  const sql = postgres.client(OUR_DATABASE);
  try {
    const deadline = Date.now() + 60_000;
    for (let quietChecks = 0; quietChecks < 3 && Date.now() < deadline; ) {
      await Bun.sleep(1000);
      const [row] =
        await sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`;
      quietChecks = (row as { n: number }).n === 0 ? quietChecks + 1 : 0;
    }
  } finally {
    await sql.close();
  }
}

/** Drops `database` once its clients are gone, so its autovacuum cannot disturb the systems measured after it. */
async function dropDatabase(postgres: PrivatePostgres, database: string): Promise<void> {
  const sql = postgres.client("postgres");
  try {
    await sql.unsafe(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  } finally {
    await sql.close();
  }
}
