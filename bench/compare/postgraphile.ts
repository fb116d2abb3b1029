/**
 * PostGraphile v5 as a system under test: its own database in the private
 * cluster, the schema of postgraphile-schema.sql, the dataset bulk-loaded with
 * SQL (multi-row INSERTs, then VACUUM ANALYZE), and the server process under Bun
 * pinned to the server core (PostgreSQL is pinned there too).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../../scripts/private-redis.ts";
import { residentMiB } from "../support.ts";
import {
  accountRow,
  allAllocations,
  allocationRows,
  contactRow,
  indexes,
  jobRow,
  regionRow,
  resourceRow,
  SIZES,
} from "./dataset.ts";
import { PEERS_DIR } from "./install.ts";
import { pssMiB } from "./memory.ts";
import { bulkInsert, type PrivatePostgres } from "./postgres.ts";
import { startServerProcess } from "./server-process.ts";
import { graphqlBody, type SystemUnderTest } from "./system.ts";

const SCHEMA_SQL = new URL("./postgraphile-schema.sql", import.meta.url);
const numbered = (prefix: string, n: number) => `${prefix}${String(n).padStart(4, "0")}`;
/** Row ids are dataset index + 1. */
const id = (index: number) => index + 1;

/** Creates the database, loads it, starts PostGraphile on `core`; `workDir` gets its log. */
export async function startPostgraphile(
  postgres: PrivatePostgres,
  core: number,
  workDir: string,
): Promise<SystemUnderTest> {
  await postgres.createDatabase("postgraphile");
  const sql = postgres.client("postgraphile");
  const [schema, afterLoad] = readFileSync(SCHEMA_SQL, "utf8").split("-- @after-load");
  const started = performance.now();
  await sql.unsafe(schema ?? "");
  await loadRows(sql);
  await sql.unsafe(afterLoad ?? "");
  await sql.unsafe("VACUUM ANALYZE");
  const seconds = (performance.now() - started) / 1000;
  await sql.close();

  const port = freePort();
  const server = await startServerProcess({
    name: "PostGraphile",
    command: [process.execPath, new URL("./postgraphile-server.ts", import.meta.url).pathname],
    env: {
      NODE_ENV: "production",
      PEERS_DIR,
      DATABASE_URL: postgres.url("postgraphile"),
      PORT: String(port),
    },
    cwd: PEERS_DIR,
    core,
    logFile: join(workDir, "postgraphile.log"),
    readyUrl: `http://127.0.0.1:${port}/graphql`,
  });
  const ops = indexes(10);
  return {
    name: "PostGraphile v5",
    url: `http://127.0.0.1:${port}/graphql`,
    headers: {},
    bodies: {
      W1: graphqlBody(
        '{ allJobs(first: 20, filter: {jobStatus: {equalTo: "Dispatched"}, duration: {greaterThan: 30}}) { edges { node { name duration jobStatus start description } } } }',
      ),
      W2: graphqlBody(
        "{ allJobs(first: 20) { edges { node { name regionByRegionId { name } jobAllocationsByJobId(first: 20) { edges { node { resourceByResourceId { name } } } } } } } }",
      ),
      W3: graphqlBody(
        'mutation Insert($d: String) { createJob(input: {job: {duration: 30, jobStatus: "Queued", regionId: "1", description: $d}}) { job { rowId } } }',
        { d: "W3 %n" },
      ),
      W4: graphqlBody(
        `mutation Upsert(${ops.map((i) => `$k${i}: String`).join(", ")}) { ${ops
          .map((i) => `u${i}: upsertAccount(input: {externalId: $k${i}, name: "W4"}) { result { rowId } }`)
          .join(" ")} }`,
        Object.fromEntries(ops.map((i) => [`k${i}`, `W4-%n-${i}`])),
      ),
    },
    load: { route: "SQL multi-row INSERTs into its tables, then VACUUM ANALYZE", seconds },
    memory: () => ({
      serverMiB: residentMiB(server.pid),
      storeMiB: pssMiB(postgres.pids()),
      storeLabel: "PostgreSQL, PSS of all its processes",
    }),
    pids: () => [server.pid, ...postgres.pids()],
    stop: server.stop,
  };
}

async function loadRows(sql: Parameters<typeof bulkInsert>[0]): Promise<void> {
  await bulkInsert(
    sql,
    "app.regions",
    indexes(SIZES.regions).map((i) => {
      const r = regionRow(i);
      return {
        id: id(i),
        name: r.name,
        timezone: r.timezone,
        description: r.description,
        country_code: r.countryCode,
      };
    }),
  );
  await bulkInsert(
    sql,
    "app.accounts",
    indexes(SIZES.accounts).map((i) => {
      const a = accountRow(i);
      return {
        id: id(i),
        name: a.name,
        external_id: a.externalId,
        phone: a.phone,
        billing_city: a.billingCity,
      };
    }),
  );
  await bulkInsert(
    sql,
    "app.contacts",
    indexes(SIZES.contacts).map((i) => {
      const c = contactRow(i);
      return {
        id: id(i),
        first_name: c.firstName,
        last_name: c.lastName,
        email: c.email,
        title: c.title,
        account_id: id(c.account),
        region_id: id(c.region),
      };
    }),
  );
  await bulkInsert(
    sql,
    "app.resources",
    indexes(SIZES.resources).map((i) => {
      const r = resourceRow(i);
      return {
        id: id(i),
        name: r.name,
        primary_region_id: id(r.primaryRegion),
        category: r.category,
        resource_type: r.resourceType,
        rating: r.rating,
      };
    }),
  );
  await bulkInsert(sql, "app.jobs", indexes(SIZES.jobs).map(jobValues));
  const allocationList = allAllocations();
  await bulkInsert(
    sql,
    "app.job_allocations",
    allocationList.map((a, i) => ({
      id: id(i),
      name: numbered("JA-", id(i)),
      job_id: id(a.job),
      resource_id: id(a.resource),
      status: a.status,
      team_leader: a.teamLeader,
    })),
  );
  const allocations = allocationList.length;
  await sql.unsafe(`
    SELECT setval(pg_get_serial_sequence('app.' || t, 'id'), n) FROM (VALUES
      ('regions', ${SIZES.regions}), ('accounts', ${SIZES.accounts}), ('contacts', ${SIZES.contacts}),
      ('resources', ${SIZES.resources}), ('jobs', ${SIZES.jobs}), ('job_allocations', ${allocations})) AS s(t, n);
    SELECT setval('app_private.job_number', ${SIZES.jobs});
    SELECT setval('app_private.job_allocation_number', ${allocations});`);
}

function jobValues(i: number): Record<string, unknown> {
  const j = jobRow(i);
  return {
    id: id(i),
    name: numbered("JOB-", id(i)),
    description: j.description,
    job_status: j.jobStatus,
    urgency: j.urgency,
    start: j.start,
    end: j.end,
    duration: j.duration,
    region_id: id(j.region),
    account_id: id(j.account),
    contact_id: j.contact === null ? null : id(j.contact),
    job_allocation_count: allocationRows(i).length,
  };
}
