/**
 * Is this checkout slower than an earlier revision? Both APIs in the same run, measured in
 * alternating turns, so a busy shared machine slows both alike and the ratio holds where the
 * absolute figures do not. Three arms, each the real API process on SQLite pinned to core 0
 * (one measured at a time), wrk on core 1: the earlier revision's API (its own work tree, a
 * detached `git worktree` under bench/.work, sharing this node_modules), this checkout's with the
 * rate limits out of reach (as every bench runs it: one Redis call per request), and this
 * checkout's with both limits off (0: no Redis call), which tells what the limiter costs.
 * Workloads: queries.ts's Q1 and Q2 on `jobs` Jobs, and mutations.ts's single insert.
 * Run: bun bench/against-revision.ts <revision> [seconds] [rounds] [jobs]
 *   → bench/results/against-revision.md
 */
import { existsSync, rmSync, symlinkSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { ensureWrk, runWrk, type WrkResult } from "./run-wrk.ts";
import { machine, startApiProcess, writeResultsFile } from "./support.ts";

const REVISION = process.argv[2] ?? "";
const SECONDS = Number(process.argv[3] ?? 5);
const ROUNDS = Number(process.argv[4] ?? 3);
const JOBS = Number(process.argv[5] ?? 20_000);
if (!REVISION) throw new Error("usage: bun bench/against-revision.ts <revision> [seconds] [rounds] [jobs]");
const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ");
const git = (...args: string[]) => {
  const proc = Bun.spawnSync(["git", ...args], { stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${proc.stderr.toString()}`);
  return proc.stdout.toString().trim();
};
const LOAD_BEFORE = loadAverage();
const began = performance.now();
ensureWrk();

const root = git("rev-parse", "--show-toplevel");
const oldCommit = git("rev-parse", "--short", REVISION);
const headCommit = git("rev-parse", "--short", "HEAD");
const dirty = git("status", "--porcelain", "--", "api", "common") !== "";
const oldTree = join(root, "bench/.work/against-revision");
if (existsSync(oldTree)) git("worktree", "remove", "--force", oldTree);
git("worktree", "add", "--detach", oldTree, oldCommit);
symlinkSync(join(root, "node_modules"), join(oldTree, "node_modules"));

const LIMITS_OFF = { RATE_LIMIT_TOKEN_PER_SECOND: "0", RATE_LIMIT_TENANT_PER_SECOND: "0" };
const arms = [
  { name: `${oldCommit} (earlier)`, api: await startApiProcess(0, {}, oldTree) },
  { name: `${headCommit}, limits out of reach`, api: await startApiProcess(0) },
  { name: `${headCommit}, limits off`, api: await startApiProcess(0, LIMITS_OFF) },
];

type Api = (typeof arms)[number]["api"];
async function load(api: Api): Promise<void> {
  const graphql = async (query: string, variables?: Record<string, unknown>) => {
    const answer = await api.call("POST", "/graphql/graphql", { query, variables });
    if (answer.body.errors) throw new Error(JSON.stringify(answer.body.errors).slice(0, 500));
    return Object.values((answer.body.data as { schema: Record<string, string> }).schema);
  };
  const regions = await graphql(
    `mutation { schema { ${Array.from({ length: 10 }, (_, i) => `r${i}: insertRegions(input: {Name: "Region ${i}", Timezone: "UTC"})`).join(" ")} } }`,
  );
  const resources = await graphql(
    `mutation { schema { ${Array.from({ length: 50 }, (_, i) => `v${i}: insertResources(input: {Name: "Van ${i}", PrimaryRegionId: "${regions[i % 10]}"})`).join(" ")} } }`,
  );
  const slots = Array.from({ length: 50 }, (_, i) => i);
  const document = `mutation Load(${slots.map((i) => `$d${i}: Duration, $s${i}: String, $r${i}: ID, $v${i}: ID`).join(", ")}) { schema { ${slots
    .map(
      (i) =>
        `j${i}: insertJobs(input: {Duration: $d${i}, JobStatus: $s${i}, RegionId: $r${i}, Description: "load"}, idAlias: "j${i}") a${i}: insertJobAllocations(input: {JobId: "j${i}", ResourceId: $v${i}})`,
    )
    .join(" ")} } }`;
  const statuses = ["Queued", "Dispatched", "Complete", "Cancelled"];
  for (let loaded = 0; loaded < JOBS; loaded += slots.length) {
    const variables: Record<string, unknown> = {};
    for (const i of slots) {
      const n = loaded + i;
      Object.assign(variables, {
        [`d${i}`]: n % 240,
        [`s${i}`]: statuses[n % statuses.length],
        [`r${i}`]: regions[n % regions.length],
        [`v${i}`]: resources[n % resources.length],
      });
    }
    await graphql(document, variables);
  }
}
for (const arm of arms) await load(arm.api);

const WORKLOADS = {
  "Q1 filtered list, 20 × 5 fields": JSON.stringify({
    query: `{ jobs(filter: "JobStatus == 'Dispatched' AND Duration > 30", first: 20) { edges { node { Name Duration JobStatus Start Description } } } }`,
  }),
  "Q2 20 Jobs + Region + allocations' Resource": JSON.stringify({
    query:
      "{ jobs(first: 20) { edges { node { Name Region { Name } JobAllocations { Resource { Name } } } } } }",
  }),
  "single-insert mutation": JSON.stringify({
    query:
      'mutation Insert($name: String!) { schema { insertRegions(input: {Name: $name, Timezone: "UTC"}) } }',
    variables: { name: "R-%n" },
  }),
};
type Workload = keyof typeof WORKLOADS;
const workloads = Object.keys(WORKLOADS) as Workload[];

/** results[workload][arm][round] */
const results = Object.fromEntries(workloads.map((w) => [w, arms.map(() => [] as WrkResult[])])) as Record<
  Workload,
  WrkResult[][]
>;
for (let round = 0; round < ROUNDS; round++) {
  for (const w of workloads) {
    // The arms take turns in a rotated order, so none is always first after the previous workload.
    for (let k = 0; k < arms.length; k++) {
      const a = (k + round) % arms.length;
      const { api } = arms[a] as (typeof arms)[number];
      const r = await runWrk({
        url: `${api.base}/graphql/graphql`,
        seconds: SECONDS,
        connections: 32,
        body: WORKLOADS[w],
        token: api.token,
        core: 1,
      });
      if (r.non2xx + r.graphqlErrors > 0) throw new Error(`${arms[a]?.name} ${w}: error answers`);
      results[w][a]?.push(r);
    }
  }
}
for (const arm of arms) await arm.api.stop();
git("worktree", "remove", "--force", oldTree);
rmSync(oldTree, { recursive: true, force: true });

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const rate = (w: Workload, arm: number) => (results[w][arm] ?? []).map((r) => r.requestsPerSecond);
const ratios = (w: Workload, arm: number, base: number) =>
  rate(w, arm).map((value, round) => value / (rate(w, base)[round] ?? Number.NaN));
const ratioText = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${(median(values) * 100).toFixed(0)}% (${sorted.map((v) => `${(v * 100).toFixed(0)}`).join(", ")})`;
};
const lines = [
  `# This checkout against ${oldCommit}`,
  "",
  `Machine: ${machine()}. Date: ${new Date().toISOString().slice(0, 10)}. Command: \`bun bench/against-revision.ts ${REVISION} ${SECONDS} ${ROUNDS} ${JOBS}\` (${((performance.now() - began) / 60_000).toFixed(1)} min in all). This checkout: ${headCommit}${dirty ? " with uncommitted changes under api/ or common/" : ""}.`,
  `Load average (1 / 5 / 15 min) before the run: ${LOAD_BEFORE}; after: ${loadAverage()}.`,
  `Setup: three real API processes on SQLite (each its own data directory and private Redis), each loaded through GraphQL with ${JOBS.toLocaleString("en")} Jobs (one allocation each), 10 Regions, 50 Resources; pinned to core 0, measured one at a time; wrk (1 thread, 32 connections, ${SECONDS} s per run) pinned to core 1. ${ROUNDS} rounds; in each, every workload is run against the three in turn (order rotated each round), and each ratio is taken within its round. The earlier revision has no rate limiter; "limits out of reach" is how every bench runs this checkout (one Redis script call per request); "limits off" sets both rates to 0 (no call).`,
  "",
  `| workload | ${arms.map((a) => `${a.name}: median req/s`).join(" | ")} | ${headCommit} out of reach ÷ ${oldCommit} (rounds) | ${headCommit} off ÷ ${oldCommit} (rounds) | out of reach ÷ off (rounds) |`,
  `|---|${arms.map(() => "---|").join("")}---|---|---|`,
  ...workloads.map(
    (w) =>
      `| ${w} | ${arms.map((_, a) => median(rate(w, a)).toFixed(0)).join(" | ")} | ${ratioText(ratios(w, 1, 0))} | ${ratioText(ratios(w, 2, 0))} | ${ratioText(ratios(w, 1, 2))} |`,
  ),
  "",
];
writeResultsFile(new URL("./results/against-revision.md", import.meta.url), lines.join("\n"));
console.log(lines.join("\n"));
