/**
 * Parse Server as a system under test: its own database in the private cluster
 * (Parse's PostgreSQL adapter; no MongoDB is obtainable here), the classes
 * created through Parse's own schema REST API, the dataset bulk-loaded with SQL
 * into the tables Parse created (its storage format: objectId, createdAt,
 * updatedAt, pointers as objectIds, the Job → JobAllocation relation in its
 * `_Join` table), an index per pointer as an operator would add, then VACUUM
 * ANALYZE. The server runs under Node.js pinned to the server core.
 */
import { join } from "node:path";
import { freePort } from "../../scripts/private-redis.ts";
import { residentMiB } from "../support.ts";
import { indexes } from "./dataset.ts";
import { nodeBinary, PEERS_DIR } from "./install.ts";
import { pssMiB } from "./memory.ts";
import { PARSE_CLASSES, PARSE_INDEXES, parseRows } from "./parse-dataset.ts";
import { bulkInsert, type PrivatePostgres } from "./postgres.ts";
import { startServerProcess } from "./server-process.ts";
import { graphqlBody, type SystemUnderTest } from "./system.ts";

const APP_ID = "bench";
const MASTER_KEY = "bench-master-key";

/** Creates the database, starts Parse Server on `core`, loads the dataset; `workDir` gets its log. */
export async function startParse(
  postgres: PrivatePostgres,
  core: number,
  workDir: string,
): Promise<SystemUnderTest> {
  await postgres.createDatabase("parse");
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = await startServerProcess({
    name: "Parse Server",
    command: [nodeBinary(), new URL("./parse-server.mjs", import.meta.url).pathname],
    env: {
      NODE_ENV: "production",
      PEERS_DIR,
      DATABASE_URL: postgres.url("parse"),
      PORT: String(port),
      APP_ID,
      MASTER_KEY,
    },
    cwd: PEERS_DIR,
    core,
    logFile: join(workDir, "parse-server.log"),
    readyUrl: `${base}/parse/health`,
  });
  const headers = { "X-Parse-Application-Id": APP_ID, "X-Parse-Master-Key": MASTER_KEY };

  const started = performance.now();
  for (const [className, fields] of Object.entries(PARSE_CLASSES)) {
    const response = await fetch(`${base}/parse/schemas/${className}`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ className, fields }),
    });
    if (!response.ok) throw new Error(`Parse schema ${className}: ${await response.text()}`);
  }
  const sql = postgres.client("parse");
  for (const [table, rows] of parseRows()) await bulkInsert(sql, table, rows);
  await sql.unsafe(PARSE_INDEXES.join(";\n"));
  await sql.unsafe("VACUUM ANALYZE");
  await sql.close();
  const seconds = (performance.now() - started) / 1000;

  const ops = indexes(10);
  return {
    name: "Parse Server",
    url: `${base}/graphql`,
    headers,
    bodies: {
      W1: graphqlBody(
        '{ jobs(first: 20, order: [objectId_ASC], where: {jobStatus: {equalTo: "Dispatched"}, duration: {greaterThan: 30}}) { edges { node { name duration jobStatus start description } } } }',
      ),
      W2: graphqlBody(
        "{ jobs(first: 20, order: [objectId_ASC]) { edges { node { name region { name } allocations(first: 20) { edges { node { resource { name } } } } } } } }",
      ),
      W3: graphqlBody(
        'mutation Insert($d: String) { createJob(input: {fields: {duration: 30, jobStatus: "Queued", region: {link: "R000000000"}, description: $d}}) { job { objectId } } }',
        { d: "W3 %n" },
      ),
      W4: graphqlBody(
        `mutation Upsert(${ops.map((i) => `$p${i}: Object`).join(", ")}) { ${ops
          .map((i) => `u${i}: callCloudCode(input: {functionName: upsertAccount, params: $p${i}}) { result }`)
          .join(" ")} }`,
        Object.fromEntries(ops.map((i) => [`p${i}`, { externalId: `W4-%n-${i}`, name: "W4" }])),
      ),
    },
    load: {
      route: "classes via Parse's schema REST API; rows via SQL into Parse's tables, then VACUUM ANALYZE",
      seconds,
    },
    memory: () => ({
      serverMiB: residentMiB(server.pid),
      storeMiB: pssMiB(postgres.pids()),
      storeLabel: "PostgreSQL, PSS of all its processes",
    }),
    pids: () => [server.pid, ...postgres.pids()],
    stop: server.stop,
  };
}
