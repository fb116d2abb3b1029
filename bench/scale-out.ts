/**
 * Scale-out on PostgreSQL (issue 29): the local cluster (scripts/local-cluster.ts) with 1, 2 and 3
 * API processes, two dispatchers each, all on one private PostgreSQL (a database per cluster, the
 * other PostgreSQL benches' settings, nothing pinned), each cluster with a Redis of its own. Every
 * mutation inserts a Region, which one webhook sends to a receiver in this process
 * (scale-out/measure.ts). One size at a time (each cluster stopped before the next starts), each
 * after the machine is quiet:
 *   closed loop — `rounds` turns per size of wrk on every API process at once, 32 connections split
 *     evenly: mutations/s (the median turn), round trip p50/p99, commit → receipt p50/p99;
 *   paced — 1,000 and 250 mutations/s from this process, round robin over the API processes: the
 *     rate achieved, the change feed's lag (sampled every 250 ms), commit → receipt p50/p99, and
 *     which processes used the CPUs.
 * On a 2-core machine every process shares the same two cores: more API processes cannot add
 * capacity, so the ratio to one API process shows the overhead of more processes — or, where one
 * API process's single event loop was the limit, the second core it left idle. The results say so.
 * Run: bun bench/scale-out.ts [seconds=2] [rounds=3] [apis=1,2,3] → bench/results/scale-out.md
 */
import { mkdtempSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalCluster, startLocalCluster } from "../scripts/local-cluster.ts";
import { startPrivatePostgres } from "../scripts/private-postgres.ts";
import { waitForQuietMachine } from "./compare/machine-load.ts";
import { POSTGRES_SETTINGS } from "./compare/postgres.ts";
import { ensureWrk } from "./run-wrk.ts";
import {
  type ClosedLoopResult,
  type CpuSplit,
  closedLoop,
  pacedLoop,
  REGIONS_WEBHOOK_QUERY,
  startTimingReceiver,
  type TimingReceiver,
} from "./scale-out/measure.ts";
import { machine, percentile, RATE_LIMITS_OUT_OF_REACH, writeResultsFile } from "./support.ts";

const SECONDS = Number(process.argv[2] ?? 2);
const ROUNDS = Number(process.argv[3] ?? 3);
const SIZES = (process.argv[4] ?? "1,2,3").split(",").map(Number);
const CONNECTIONS = 32;
/** Paced rates: the issue's 1,000 mutations/s, and one each cluster here can keep up with, for the feed's lag with headroom. */
const PACED_RATES = [1000, 250];
const PACED_SECONDS = Math.max(SECONDS * 2, 6);
const DISPATCHERS = 2;
/** Deliveries in flight to the one receiver across the dispatchers: every slot of both (32 each). */
const ENDPOINT_LIMIT = 64;
const loadNow = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ");
const LOAD_BEFORE = loadNow();
/** The other PostgreSQL benches' settings, with room for a cluster's pools (10 connections per process). */
const SETTINGS = { ...POSTGRES_SETTINGS, max_connections: "300" };

interface Measured {
  size: number;
  cluster: LocalCluster;
  token: string;
  receiver: TimingReceiver;
  turns: ClosedLoopResult[];
}

/** A cluster of `size` API processes on its own database (its webhook made by `addWebhook`). */
async function startMeasured(postgres: Awaited<ReturnType<typeof startPrivatePostgres>>, size: number) {
  await postgres.createDatabase(`scale_${size}`);
  const receiver = startTimingReceiver();
  const cluster = await startLocalCluster(
    {
      "--api": size,
      "--dispatchers": DISPATCHERS,
      "--port": 0,
      HOST: "127.0.0.1",
      DATABASE_URL: postgres.url(`scale_${size}`),
      REDIS_URL: undefined,
      JWT_SECRET: undefined,
      SECRETS_KEY: undefined,
    },
    (line) => console.log(line),
    {
      LOG_LEVEL: "error",
      ...RATE_LIMITS_OUT_OF_REACH,
      WEBHOOKS_ALLOW_HTTP: "true",
      DELIVERY_ALLOW_HTTP: "true",
      DELIVERY_ALLOW_PRIVATE_NETWORKS: "127.0.0.0/8",
      // Every delivery goes to one receiver: at the default limit (8 in flight) bursts would park
      // jobs about a second (the limit at work, measured by bench/dispatch.ts), not the cluster's pace.
      DELIVERY_ENDPOINT_CONCURRENCY: String(ENDPOINT_LIMIT),
    },
  );
  return { size, cluster, token: cluster.token ?? "", receiver, turns: [] } satisfies Measured;
}

/** The webhook sending every Region insert to the measured cluster's receiver. */
async function addWebhook(m: Measured) {
  const hook = await fetch(`${m.cluster.apis[0]?.spec.url}/webhooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${m.token}`, "content-type": "application/json" },
    body: JSON.stringify({
      name: "regions",
      url: m.receiver.url,
      type: "graphql",
      query: REGIONS_WEBHOOK_QUERY,
    }),
  });
  if (hook.status !== 201) throw new Error(`the webhook answered ${hook.status}: ${await hook.text()}`);
}

const started = Date.now();
const say = (what: string) => console.log(`${what} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
ensureWrk();
const postgres = await startPrivatePostgres({
  dir: mkdtempSync(join(tmpdir(), "tds-bench-scale-out-")),
  settings: SETTINGS,
});
const measured: Measured[] = [];
/** The issue's rate for the feed on its own (no webhook: nothing to deliver). */
const FEED_ONLY_RATE = 1000;
/** Per size, the feed-only paced run. */
const feedOnly: Awaited<ReturnType<typeof pacedLoop>>[] = [];
/** Per size, one paced run per rate of PACED_RATES. */
const paced: Awaited<ReturnType<typeof pacedLoop>>[][] = [];
/** Other work's share of the CPUs in the 5 s before each size was measured. */
const quietBefore: number[] = [];
try {
  // One size at a time, each cluster stopped before the next starts: side by side, the idle clusters'
  // dispatchers, pools and feed readers took CPU from the one measured.
  for (const size of SIZES) {
    quietBefore.push(await waitForQuietMachine(60_000));
    say(`starting ${size} API processes`);
    const m: Measured = await startMeasured(postgres, size);
    try {
      // The feed alone first, before any webhook: every change read and matched, none to deliver.
      await pacedLoop(m.cluster, m.token, null, { seconds: 2, rate: FEED_ONLY_RATE });
      say(`feed only, paced at ${FEED_ONLY_RATE}/s, ${m.size} API`);
      feedOnly.push(
        await pacedLoop(m.cluster, m.token, null, { seconds: PACED_SECONDS, rate: FEED_ONLY_RATE }),
      );
      await addWebhook(m);
      await closedLoop(m.cluster, m.token, m.receiver, { seconds: 1, connections: CONNECTIONS, tag: "warm" });
      for (let round = 0; round < ROUNDS; round++) {
        say(`round ${round + 1}, ${m.size} API`);
        m.turns.push(
          await closedLoop(m.cluster, m.token, m.receiver, {
            seconds: SECONDS,
            connections: CONNECTIONS,
            tag: `r${round}`,
          }),
        );
      }
      const runs = [];
      for (const rate of PACED_RATES) {
        say(`paced at ${rate}/s, ${m.size} API`);
        runs.push(await pacedLoop(m.cluster, m.token, m.receiver, { seconds: PACED_SECONDS, rate }));
      }
      paced.push(runs);
      measured.push(m);
    } finally {
      await m.cluster.stop();
      await m.receiver.stop();
    }
  }
} finally {
  // The data is thrown away: an immediate shutdown skips the checkpoint (tens of seconds on a busy disk).
  postgres.killNow();
}

const median = (m: Measured) =>
  [...m.turns].sort((a, b) => a.rate - b.rate)[Math.floor(m.turns.length / 2)] as ClosedLoopResult;
const baseRate = median(measured[0] as Measured).rate;
const ratios = measured.map((m) => median(m).rate / baseRate);
const rows = measured.map((m, i) => {
  const turn = median(m);
  const receipts = m.turns.flatMap((t) => t.receipts);
  const rates = m.turns.map((t) => Math.round(t.rate)).join(", ");
  return `| ${m.size} | ${Math.round(turn.rate)} (${rates}) | ${(ratios[i] ?? 0).toFixed(2)}× | ${Math.round(turn.roundTripP50)} / ${Math.round(turn.roundTripP99)} | ${percentile(receipts, 50)} / ${percentile(receipts, 99)} | ${turn.eventLoops.map((e) => `${e.runPercent} / ${e.waitPercent}`).join(", ")} | ${m.turns.reduce((s, t) => s + t.errors, 0)} |`;
});
type Paced = Awaited<ReturnType<typeof pacedLoop>>;
const pacedRow = (size: number, what: string, p: Paced, receipts: boolean) =>
  `| ${size} | ${what} | ${Math.round(p.achieved)} | ${Math.round(p.lagP50Ms)} / ${Math.round(p.lagMaxMs)} ms, ≤ ${p.lagMaxChanges} changes | ${receipts ? `${p.receiptP50} / ${p.receiptP99}` : "–"} | ${p.failed} | ${cpuCells(p.cpu)} |`;
const pacedRows = measured.flatMap((m, i) => [
  ...(feedOnly[i] ? [pacedRow(m.size, `${FEED_ONLY_RATE}, feed only (no webhook)`, feedOnly[i], false)] : []),
  ...(paced[i] ?? []).map((p, r) => pacedRow(m.size, `${PACED_RATES[r]}, one webhook`, p, true)),
]);
function cpuCells(cpu: CpuSplit): string {
  const cores = [cpu.apis, cpu.dispatchers, cpu.postgres, cpu.redis, cpu.bench, cpu.other];
  return `${cores.map((c) => c.toFixed(2)).join(" / ")} (${cores.reduce((s, c) => s + c, 0).toFixed(2)} of ${cpus().length})`;
}
const rises = ratios.some((r) => r > 1.05);
const reading = rises
  ? "Where the ratio rises above 1, it is not capacity a cluster adds: one API process runs its JavaScript on one event loop (see its share on a CPU), so with one process the second core was partly left to the others, and a second process puts it to work; past two there is no core left to add, and every process costs its own share (its event loop, its pool of connections, the feed's wake-up from a process without the lease), which the time the event loops wait for a CPU shows."
  : "More API processes only add processes, connections and cross-process wake-ups (a commit on a process without the feed's lease wakes the reader through Redis or PostgreSQL's NOTIFY) without adding CPU.";
const topRate = PACED_RATES[0] ?? 0;
const keptUp = paced.filter((runs) => (runs[0]?.achieved ?? 0) >= topRate * 0.95).length;
const feedKeptUp = feedOnly.filter((p) => p.achieved >= FEED_ONLY_RATE * 0.95).length;
const feedReading =
  feedKeptUp === measured.length
    ? `The feed on its own kept up with ${FEED_ONLY_RATE} mutations/s at every size (its lag in the first paced row of each).`
    : `The feed on its own kept up with ${FEED_ONLY_RATE} mutations/s at ${feedKeptUp} of ${measured.length} sizes.`;
const pacedReading =
  keptUp === measured.length
    ? `Every size kept up with ${topRate} mutations/s and one webhook.`
    : `${keptUp === 0 ? "No size" : `Only ${keptUp} of ${measured.length} sizes`} kept up with ${topRate} mutations/s and one webhook: the CPUs were full (their split shows where they went), so the feed's lag at that rate is the backlog of a saturated machine; at the lower rate it is the feed's own delay.`;
const text = `# Scale-out on PostgreSQL

Machine: ${machine()}. Date: ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC. Command: \`bun bench/scale-out.ts ${SECONDS} ${ROUNDS} ${SIZES.join(",")}\`. Took ${((Date.now() - started) / 1000).toFixed(0)} s.
Load average (1 / 5 / 15 min) before the run: ${LOAD_BEFORE}; after: ${loadNow()}. Other work's share of the CPUs just before each size: ${quietBefore.map((q, i) => `${SIZES[i]} API ${(q * 100).toFixed(0)}%`).join(", ")}. One run: figures move from run to run.

Setup: the local cluster (\`npm run cluster\`'s scripts/local-cluster.ts) of each size, one size at a time (each stopped before the next starts), ${DISPATCHERS} dispatchers each, nothing pinned; PostgreSQL (Debian's, one private cluster for the run, a database per size; settings other than defaults: ${Object.entries(
  SETTINGS,
)
  .map(([k, v]) => `${k}=${v}`)
  .join(
    ", ",
  )}); a private Redis per size; rate limits out of reach; DELIVERY_ENDPOINT_CONCURRENCY=${ENDPOINT_LIMIT} (every slot of both dispatchers: all deliveries go to one receiver, and the default 8 would park bursts about a second); every mutation one Region insert, sent by one webhook to a receiver in the benchmark's process. Closed loop: ${ROUNDS} turns of ${SECONDS} s per size after a 1 s warm-up, wrk with ${CONNECTIONS} connections split evenly over the API processes (one wrk each); mutations/s of the median turn (every turn in brackets), its round trip (the slowest wrk's p50 / p99) and each API process's main thread (its event loop) over it: the share of the turn it ran on a CPU and the share it waited, runnable, for one (Linux schedstat). Paced: first the feed alone at ${FEED_ONLY_RATE} mutations/s before any webhook exists (every change read from the change log and matched against the tenant's webhooks, none to deliver; after 2 s of warm-up), then with the webhook at ${PACED_RATES.join(" and ")} mutations/s; ${PACED_SECONDS} s each, from the benchmark's process (64 writers, round robin over the API processes); feed lag sampled every 250 ms from every API process (per partition the freshest figure, then the worst partition); the CPU the processes used meanwhile, in cores (1.00 = one core busy throughout; PostgreSQL and Redis by process name, so a Redis of other work would count). Commit → receipt: the element's \`timestamp\` to the receiver's clock.

## Closed loop

| API processes | mutations/s (turns) | vs 1 API | round trip p50 / p99 ms | commit → receipt p50 / p99 ms | API event loops, % on a CPU / waiting for one | errors |
| --- | --- | --- | --- | --- | --- | --- |
${rows.join("\n")}

## Paced

| API processes | mutations/s offered | achieved | feed lag p50 / max | commit → receipt p50 / p99 ms | failed | CPU, in cores: APIs / dispatchers / PostgreSQL / Redis / bench / other |
| --- | --- | --- | --- | --- | --- | --- |
${pacedRows.join("\n")}

**On this 2-core machine the ratio shows overhead, not speed-up**: every API process, both dispatchers, PostgreSQL, Redis, wrk and the receiver share the same two cores. ${reading} What scaling out buys shows on machines of their own. ${feedReading} ${pacedReading}
`;
const file = join(import.meta.dir, "results/scale-out.md");
writeResultsFile(file, text);
console.log(text);
