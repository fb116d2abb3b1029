/**
 * Schema build and change visibility (issue 3): a tenant with 150 custom
 * objects of 15 fields. Measures (1) a cold build of its GraphQL schema against
 * graphql-js building the same schema from its SDL, and (2) the time from a
 * field-adding REST call returning to that field being visible to the next
 * GraphQL request, against a plain authenticated request (GET /auth/whoami).
 * Run: bun bench/schema-build.ts  → prints and writes bench/results/schema-build.md
 */
import { buildSchema, printSchema } from "graphql";
import { buildTenantSchema } from "../api/graphql/schema/build-schema.ts";
import { machine, ms, percentile, startBenchApi, writeResultsFile } from "./support.ts";

const OBJECTS = 150;
const FIELDS = 15;
const ROUNDS = 200;
const TYPES = ["string", "int", "decimal", "boolean", "datetime"];

const api = await startBenchApi();
const tenantId = ((await api.call("GET", "/auth/whoami")).body.result as { tenantId: string }).tenantId;
for (let o = 0; o < OBJECTS; o++) {
  const fields = Array.from({ length: FIELDS }, (_, f) => ({
    name: `F${f}`,
    column: { type: TYPES[f % TYPES.length] },
  }));
  const { status } = await api.call("POST", "/custom/standalone/schemas", { name: `Bench${o}`, fields });
  if (status !== 200) throw new Error(`creating Bench${o} answered ${status}`);
}
const catalogue = await api.services.catalogues.get(tenantId);

const build: number[] = [];
const fromSdl: number[] = [];
const sdl = printSchema(buildTenantSchema(catalogue));
for (let i = 0; i < 30; i++) {
  let start = performance.now();
  buildTenantSchema(catalogue);
  build.push(performance.now() - start);
  start = performance.now();
  buildSchema(sdl);
  fromSdl.push(performance.now() - start);
}

const visible: number[] = [];
const baseline: number[] = [];
let missed = 0;
for (let i = 0; i < ROUNDS; i++) {
  const object = `Bench${i % OBJECTS}`;
  const added = await api.call("POST", "/custom/standalone/fields", {
    schemaName: object,
    name: `Added${i}`,
    column: { type: "string" },
  });
  if (added.status !== 200) throw new Error(`adding a field answered ${added.status}`);
  let start = performance.now();
  const seen = await api.call("POST", "/graphql/graphql", {
    query: `{ __type(name: "${object}") { fields { name } } }`,
  });
  visible.push(performance.now() - start);
  if (!JSON.stringify(seen.body).includes(`"Added${i}"`)) missed++;
  start = performance.now();
  await api.call("GET", "/auth/whoami");
  baseline.push(performance.now() - start);
}
await api.stop();

const rows = [
  [
    "cold schema build (150 objects × 15 fields)",
    build,
    fromSdl,
    "graphql-js buildSchema(SDL) of the same schema",
  ],
  ["first GraphQL request after adding a field", visible, baseline, "GET /auth/whoami"],
] as const;
const lines = [
  "# Schema build and change visibility",
  "",
  `Machine: ${machine()}. Date: ${new Date().toISOString().slice(0, 10)}. Command: \`bun bench/schema-build.ts\`.`,
  `Tenant: ${OBJECTS} custom objects × ${FIELDS} fields (+ the standard objects); ${ROUNDS} field additions over real HTTP on loopback.`,
  "",
  "| measure | p50 | p99 | baseline | baseline p50 | baseline p99 | ratio p50 |",
  "|---|---|---|---|---|---|---|",
  ...rows.map(
    ([name, ours, base, baseName]) =>
      `| ${name} | ${ms(percentile(ours, 50))} | ${ms(percentile(ours, 99))} | ${baseName} | ${ms(percentile(base, 50))} | ${ms(percentile(base, 99))} | ${(percentile(ours, 50) / percentile(base, 50)).toFixed(2)}× |`,
  ),
  "",
  `The added field was visible to the very next request in ${ROUNDS - missed} of ${ROUNDS} rounds (target: all, p99 under 50 ms).`,
  "",
];
writeResultsFile(new URL("./results/schema-build.md", import.meta.url), lines.join("\n"));
console.log(lines.join("\n"));
