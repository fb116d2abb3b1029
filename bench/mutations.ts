/**
 * Mutation throughput (issue 6), with the change log on: single-insert
 * mutations/s, and records/s in 100-operation upsert mutations. The real API
 * process on core 0, wrk on core 1 (each workload measured after a warm-up
 * of its own), against a bare Bun.serve JSON endpoint measured in the same
 * run. Records written are counted from the change log, so a mutation that
 * answered with errors does not count. Documents are fixed and values travel
 * in variables, as clients send them.
 * Run: bun bench/mutations.ts [seconds] [--engine sqlite|postgres]
 *   → bench/results/mutations.md (SQLite) or mutations-postgres.md
 * Profile: BENCH_PROFILE_DIR=<dir> runs the API under Bun's sampling profiler and records nothing.
 */
import { loadavg } from "node:os";
import { ENGINE_LABEL, engineSetup, parseBenchArgs, startApiOn } from "./bench-engine.ts";
import { pssMiB } from "./compare/memory.ts";
import { ensureWrk, runWrk, type WrkResult } from "./run-wrk.ts";
import { machine, PROFILE_DIR, residentMiB, startBareServer, writeResultsFile } from "./support.ts";

const { engine, positional } = parseBenchArgs(process.argv.slice(2));
const SECONDS = Number(positional[0] ?? 10);
const LOAD_BEFORE = loadavg()
  .map((l) => l.toFixed(2))
  .join(" / ");
const CONNECTIONS = 32;
const WARMUP_SECONDS = Math.min(3, SECONDS);
ensureWrk();

const bare = await startBareServer(0);
const baseline = await runWrk({ url: bare.url, seconds: SECONDS, connections: CONNECTIONS, core: 1 });
await bare.stop();

const api = await startApiOn(engine, 0);
const created = await api.call("POST", "/custom/standalone/schemas", {
  name: "Item",
  fields: [
    { name: "Key", column: { type: "string", unique: true } },
    { name: "Qty", column: { type: "int" } },
  ],
});
if (created.status !== 200) throw new Error(`creating the object answered ${created.status}`);

// Documents stay the same from request to request (as a client's do); values travel in variables.
const insert = JSON.stringify({
  query:
    'mutation Insert($name: String!) { schema { insertRegions(input: {Name: $name, Timezone: "UTC"}) } }',
  variables: { name: "R-%n" },
});
const ops = Array.from({ length: 100 }, (_, i) => i);
const upserts = JSON.stringify({
  query: `mutation Upsert(${ops.map((i) => `$k${i}: String!`).join(", ")}) { schema { ${ops
    .map((i) => `u${i}: upsertItem(input: {Key: $k${i}, Qty: ${i}}, keyField: "Key")`)
    .join(" ")} } }`,
  variables: Object.fromEntries(ops.map((i) => [`k${i}`, `%n-${i}`])),
});
const probe = await api.call("POST", "/graphql/graphql", JSON.parse(upserts.replaceAll("%n", "probe")));
if (probe.body.errors) throw new Error(`the upsert mutation fails: ${JSON.stringify(probe.body.errors)}`);

/** A warm-up (compiled code, caches and tables as in steady use), then the measured run and the records it wrote per second. */
async function measure(body: string): Promise<[WrkResult, number]> {
  const options = {
    url: `${api.base}/graphql/graphql`,
    connections: CONNECTIONS,
    body,
    token: api.token,
    core: 1,
  };
  await runWrk({ ...options, seconds: WARMUP_SECONDS });
  const before = await api.changeCount();
  const run = await runWrk({ ...options, seconds: SECONDS });
  return [run, ((await api.changeCount()) - before) / SECONDS];
}
const [inserts, insertRecords] = await measure(insert);
const [upsertRun, upsertRecords] = await measure(upserts);
const memory = residentMiB(api.pid);
const storeMemory = pssMiB(api.storePids());
await api.stop();

const row = (name: string, run: WrkResult, records: number) =>
  `| ${name} | ${run.requestsPerSecond.toFixed(0)} | ${records.toFixed(0)} | ${run.p50Ms.toFixed(2)} ms | ${run.p99Ms.toFixed(2)} ms | ${((run.requestsPerSecond / baseline.requestsPerSecond) * 100).toFixed(1)}% |`;
const lines = [
  `# Mutation throughput${engine === "sqlite" ? "" : ` on ${ENGINE_LABEL[engine]}`}`,
  "",
  `Machine: ${machine()}. Date: ${new Date().toISOString().slice(0, 10)}. Command: \`bun bench/mutations.ts ${SECONDS}${engine === "sqlite" ? "" : ` --engine ${engine}`}\`.`,
  `Load average before the run (1 / 5 / 15 min): ${LOAD_BEFORE} — figures from a busy machine are lower than they would be on an idle one.`,
  `Setup: the API process pinned to core 0, its store ${engineSetup(engine)}, the change log written in each mutation's transaction; wrk (1 thread, ${CONNECTIONS} connections, ${SECONDS} s after a ${WARMUP_SECONDS} s warm-up of the same workload) pinned to core 1; loopback.`,
  "",
  "| workload | requests/s | records/s (from the change log) | p50 | p99 | vs bare Bun.serve |",
  "|---|---|---|---|---|---|",
  `| bare Bun.serve JSON (baseline) | ${baseline.requestsPerSecond.toFixed(0)} | – | ${baseline.p50Ms.toFixed(2)} ms | ${baseline.p99Ms.toFixed(2)} ms | 100% |`,
  row("single-insert mutation", inserts, insertRecords),
  row("100 aliased upserts per mutation", upsertRun, upsertRecords),
  "",
  `Targets: ≥ 5,000 single-insert mutations/s; ≥ 20,000 records/s in 100-upsert mutations (issue 6); ≥ 10,000 single-insert mutations/s (issue 35): ${inserts.requestsPerSecond >= 10_000 ? "met" : "**not met**"}. API resident memory after the run: ${memory.toFixed(0)} MiB${engine === "sqlite" ? "" : `; PostgreSQL's processes (PSS): ${storeMemory.toFixed(0)} MiB`}. Non-2xx answers: ${inserts.non2xx + upsertRun.non2xx}.`,
  "",
];
const resultsFile = engine === "sqlite" ? "mutations.md" : `mutations-${engine}.md`;
// A profiled API is slower: its figures are not recorded.
if (PROFILE_DIR) console.log(`profile in ${PROFILE_DIR}; nothing recorded`);
else writeResultsFile(new URL(`./results/${resultsFile}`, import.meta.url), lines.join("\n"));
console.log(lines.join("\n"));
