/**
 * Query throughput and scaling (issue 5). The real API process on core 0, wrk
 * on core 1, against a bare Bun.serve JSON endpoint measured in the same run:
 *   Q1 an authenticated filtered list, 20 rows × 5 fields, tenant with 100k Jobs;
 *   Q2 20 Jobs with Region { Name } and JobAllocations { Resource { Name } };
 *   Q1's p50 as the tenant grows from 10k to 100k to 1M Jobs.
 * At 100k Jobs the bare endpoint, Q1 and Q2 are measured in turns, ROUNDS times, and each
 * ratio is taken within its round (the machine is shared: its speed drifts between minutes);
 * the medians are reported. Data is loaded through the public GraphQL API.
 * Run: bun bench/queries.ts [seconds] [maxJobs] [--engine sqlite|postgres]
 *   → bench/results/queries.md (SQLite) or queries-postgres.md
 */
import { loadavg } from "node:os";

import { ENGINE_LABEL, engineSetup, parseBenchArgs, startApiOn } from "./bench-engine.ts";
import { pssMiB } from "./compare/memory.ts";
import { ensureWrk, runWrk, type WrkResult } from "./run-wrk.ts";
import { machine, residentMiB, startBareServer, writeResultsFile } from "./support.ts";

const { engine, positional } = parseBenchArgs(process.argv.slice(2));
const SECONDS = Number(positional[0] ?? 10);
const LOAD_BEFORE = loadavg()
  .map((l) => l.toFixed(2))
  .join(" / ");
const MAX_JOBS = Number(positional[1] ?? 1_000_000);
const CONNECTIONS = 32;
const ROUNDS = 3;
const STATUSES = ["Queued", "Dispatched", "Complete", "Cancelled"];
ensureWrk();

// Up for the whole run, idle while the API is measured: each round measures both.
const bare = await startBareServer(0);
const measureBare = () => runWrk({ url: bare.url, seconds: SECONDS, connections: CONNECTIONS, core: 1 });

const api = await startApiOn(engine, 0);
const graphql = async (query: string, variables?: Record<string, unknown>) => {
  const answer = await api.call("POST", "/graphql/graphql", { query, variables });
  if (answer.body.errors) throw new Error(JSON.stringify(answer.body.errors).slice(0, 500));
  return answer.body.data as Record<string, Record<string, string>>;
};
const regions = Object.values(
  (
    await graphql(
      `mutation { schema { ${Array.from({ length: 10 }, (_, i) => `r${i}: insertRegions(input: {Name: "Region ${i}", Timezone: "UTC"})`).join(" ")} } }`,
    )
  ).schema ?? {},
);
const resources = Object.values(
  (
    await graphql(
      `mutation { schema { ${Array.from({ length: 50 }, (_, i) => `v${i}: insertResources(input: {Name: "Van ${i}", PrimaryRegionId: "${regions[i % 10]}"})`).join(" ")} } }`,
    )
  ).schema ?? {},
);

let loaded = 0;
const loadSeconds: number[] = [];
/** Loads jobs up to `target`; the first 20k get two allocations each (Q2's second level). */
async function loadJobs(target: number) {
  const started = performance.now();
  const jobs = Array.from({ length: 50 }, (_, i) => i);
  const insertJobs = `mutation Load(${jobs.map((i) => `$d${i}: Duration, $s${i}: String, $r${i}: ID`).join(", ")}) { schema { ${jobs
    .map(
      (i) =>
        `j${i}: insertJobs(input: {Duration: $d${i}, JobStatus: $s${i}, RegionId: $r${i}, Description: "load"}, idAlias: "j${i}")`,
    )
    .join(" ")} } }`;
  const withAllocations = `mutation LoadA(${jobs.map((i) => `$d${i}: Duration, $s${i}: String, $r${i}: ID, $v${i}: ID`).join(", ")}) { schema { ${jobs
    .map(
      (i) =>
        `j${i}: insertJobs(input: {Duration: $d${i}, JobStatus: $s${i}, RegionId: $r${i}, Description: "load"}, idAlias: "j${i}") a${i}: insertJobAllocations(input: {JobId: "j${i}", ResourceId: $v${i}})`,
    )
    .join(" ")} } }`;
  while (loaded < target) {
    const variables: Record<string, unknown> = {};
    for (const i of jobs) {
      const n = loaded + i;
      variables[`d${i}`] = n % 240;
      variables[`s${i}`] = STATUSES[n % STATUSES.length];
      variables[`r${i}`] = regions[n % regions.length];
      variables[`v${i}`] = resources[n % resources.length];
    }
    // 50 jobs (and 50 allocations while under 20k) per mutation, inside the 100-alias limit.
    await graphql(
      loaded < 20_000 ? withAllocations : insertJobs.replace(/, \$v\d+: ID/g, ""),
      loaded < 20_000
        ? variables
        : Object.fromEntries(Object.entries(variables).filter(([k]) => !k.startsWith("v"))),
    );
    loaded += jobs.length;
  }
  loadSeconds.push((performance.now() - started) / 1000);
}

const body = (query: string) => JSON.stringify({ query });
const Q1 = body(
  `{ jobs(filter: "JobStatus == 'Dispatched' AND Duration > 30", first: 20) { edges { node { Name Duration JobStatus Start Description } } } }`,
);
const Q2 = body(
  `{ jobs(first: 20) { edges { node { Name Region { Name } JobAllocations { Resource { Name } } } } } }`,
);
const url = `${api.base}/graphql/graphql`;
const run = (payload: string) =>
  runWrk({ url, seconds: SECONDS, connections: CONNECTIONS, body: payload, token: api.token, core: 1 });

interface Round {
  bare: WrkResult;
  q1: WrkResult;
  q2: WrkResult;
}
const growth: { jobs: number; q1: WrkResult }[] = [];
const rounds: Round[] = [];
for (const size of [10_000, 100_000, MAX_JOBS].filter((n, i, all) => n <= MAX_JOBS && all.indexOf(n) === i)) {
  await loadJobs(size);
  if (size !== 100_000) {
    growth.push({ jobs: size, q1: await run(Q1) });
    continue;
  }
  for (let round = 0; round < ROUNDS; round++) {
    rounds.push({ bare: await measureBare(), q1: await run(Q1), q2: await run(Q2) });
  }
  growth.push({ jobs: size, q1: medianBy(rounds.map((r) => r.q1)) });
}
const memory = residentMiB(api.pid);
const storeMemory = pssMiB(api.storePids());
await api.stop();
await bare.stop();

/** The run with the median requests/s. */
function medianBy(results: WrkResult[]): WrkResult {
  const sorted = [...results].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  return sorted[Math.floor(sorted.length / 2)] as WrkResult;
}
const ratio = (r: WrkResult, base: WrkResult) => r.requestsPerSecond / base.requestsPerSecond;
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const percent = (share: number) => `${(share * 100).toFixed(1)}%`;

const cell = (r: WrkResult) =>
  `${r.requestsPerSecond.toFixed(0)} | ${r.p50Ms.toFixed(2)} ms | ${r.p99Ms.toFixed(2)} ms`;
const roundRows = rounds.flatMap((r, i) => [
  `| ${i + 1} | bare Bun.serve JSON (baseline) | ${cell(r.bare)} | 100% |`,
  `| ${i + 1} | Q1 filtered list, 20 × 5 fields | ${cell(r.q1)} | ${percent(ratio(r.q1, r.bare))} |`,
  `| ${i + 1} | Q2 20 Jobs + Region + allocations' Resource | ${cell(r.q2)} | ${percent(ratio(r.q2, r.bare))} |`,
]);
const medianRatio = (pick: (r: Round) => WrkResult) =>
  percent(median(rounds.map((r) => ratio(pick(r), r.bare))));
const spread = (pick: (r: Round) => WrkResult) => {
  const ratios = rounds.map((r) => ratio(pick(r), r.bare)).sort((a, b) => a - b);
  return `${percent(ratios[0] ?? Number.NaN)} to ${percent(ratios[ratios.length - 1] ?? Number.NaN)}`;
};
const first = growth[0]?.q1.p50Ms ?? Number.NaN;
const lines = [
  `# Query throughput and scaling${engine === "sqlite" ? "" : ` on ${ENGINE_LABEL[engine]}`}`,
  "",
  `Machine: ${machine()}. Date: ${new Date().toISOString().slice(0, 10)}. Command: \`bun bench/queries.ts ${SECONDS} ${MAX_JOBS}${engine === "sqlite" ? "" : ` --engine ${engine}`}\`.`,
  `Load average before the run (1 / 5 / 15 min): ${LOAD_BEFORE} — figures from a busy machine are lower than they would be on an idle one.`,
  `Setup: the API process pinned to core 0, its store ${engineSetup(engine)}; wrk (1 thread, ${CONNECTIONS} connections, ${SECONDS} s per run) pinned to core 1; loopback; the same documents every request (parsed and validated once); default settings, so Q1 and Q2 are read whole by the store, one statement each (\`GRAPHQL_STORE_READS\`). Data loaded through GraphQL: ${loadSeconds.map((s) => `${s.toFixed(0)} s`).join(" + ")}.`,
  "",
  `At 100k Jobs, ${ROUNDS} rounds, each measuring the bare endpoint, Q1 and Q2 in turn; ratios within a round:`,
  "",
  "| round | workload | requests/s | p50 | p99 | vs bare Bun.serve (same round) |",
  "|---|---|---|---|---|---|",
  ...roundRows,
  "",
  `Median ratios: Q1 **${medianRatio((r) => r.q1)}** (target ≥ 15%; rounds ${spread((r) => r.q1)}), Q2 **${medianRatio((r) => r.q2)}** (target ≥ 8%; rounds ${spread((r) => r.q2)}).`,
  "",
  "Q1 as the tenant grows:",
  "",
  "| Jobs | requests/s | p50 | p99 | p50 vs 10k |",
  "|---|---|---|---|---|",
  ...growth.map(
    ({ jobs, q1 }) =>
      `| ${jobs.toLocaleString("en")} | ${q1.requestsPerSecond.toFixed(0)} | ${q1.p50Ms.toFixed(2)} ms | ${q1.p99Ms.toFixed(2)} ms | ${(q1.p50Ms / first).toFixed(2)}× |`,
  ),
  "",
  `Target: p50 grows at most 1.5× from 10k to 1M Jobs. API resident memory at the end: ${memory.toFixed(0)} MiB${engine === "sqlite" ? "" : `; PostgreSQL's processes (PSS): ${storeMemory.toFixed(0)} MiB`}.`,
  "",
];
const resultsFile = engine === "sqlite" ? "queries.md" : `queries-${engine}.md`;
writeResultsFile(new URL(`./results/${resultsFile}`, import.meta.url), lines.join("\n"));
console.log(lines.join("\n"));
