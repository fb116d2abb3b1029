/**
 * Scale-out on PostgreSQL (issue 29): the local cluster (scripts/local-cluster.ts) with 1, 2 and 3
 * API processes and two dispatchers, on one private PostgreSQL (a database per size, the settings
 * of the other PostgreSQL benches, unpinned) and a Redis of the cluster's own. Every mutation
 * inserts a Region, which one webhook sends to a receiver in this process. Per size:
 *   (a) closed loop — wrk, 32 connections split evenly over the API processes, one wrk per process:
 *       mutations/s, round trip p50/p99, commit → receipt p50/p99;
 *   (b) paced at 1,000 mutations/s (this process's writers, round robin over the API processes):
 *       the rate achieved, the change feed's lag (`change_feed_lag_seconds` / `_changes`, sampled
 *       every 250 ms from every API process: per partition the freshest figure, then the largest
 *       partition), commit → receipt p50/p99.
 * On a 2-core machine every process shares the same two cores: more API processes add processes,
 * connections and cross-process wake-ups, not capacity, so the ratio to one API process shows the
 * overhead of scaling out, not its speed-up. The results say so.
 * Run: bun bench/scale-out.ts [seconds=4] [apis=1,2,3] → bench/results/scale-out.md
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalCluster, startLocalCluster } from "../scripts/local-cluster.ts";
import { startPrivatePostgres } from "../scripts/private-postgres.ts";
import { POSTGRES_SETTINGS } from "./compare/postgres.ts";
import { ensureWrk, runWrk } from "./run-wrk.ts";
import { machine, percentile, RATE_LIMITS_OUT_OF_REACH } from "./support.ts";

const SECONDS = Number(process.argv[2] ?? 4);
const SIZES = (process.argv[3] ?? "1,2,3").split(",").map(Number);
const CONNECTIONS = 32;
const PACED_RATE = 1000;
const DISPATCHERS = 2;
const LOAD_BEFORE = loadavg()
  .map((l) => l.toFixed(2))
  .join(" / ");

const INSERT = (name: string) =>
  JSON.stringify({
    query:
      'mutation Insert($name: String!) { schema { insertRegions(input: {Name: $name, Timezone: "UTC"}) } }',
    variables: { name },
  });

/** A receiver of the webhook's deliveries: each element's commit time and when it arrived. */
function startTimingReceiver() {
  const receipts: { committedAt: number; ms: number }[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const receivedAt = Date.now();
      const elements = (await request.json()) as { data: { schemaRegions: { timestamp: string } } }[];
      for (const element of elements) {
        const committedAt = Date.parse(element.data.schemaRegions.timestamp);
        receipts.push({ committedAt, ms: receivedAt - committedAt });
      }
      return new Response("ok");
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hook`, receipts, stop: () => server.stop(true) };
}
type TimingReceiver = ReturnType<typeof startTimingReceiver>;

/** Waits until the receiver has had `count` elements committed since `since`, or 30 s. */
async function drained(receiver: TimingReceiver, since: number, count: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (receiver.receipts.filter((r) => r.committedAt >= since).length < count && Date.now() < deadline)
    await Bun.sleep(100);
}

/** The feed's lag now: per partition the smallest figure over the API processes, then the largest partition. */
async function feedLag(bases: string[]): Promise<{ seconds: number; changes: number }> {
  const texts = await Promise.all(bases.map(async (base) => (await fetch(`${base}/metrics`)).text()));
  const worst = (name: string) => {
    const byPartition = new Map<string, number>();
    for (const text of texts)
      for (const match of text.matchAll(new RegExp(`^${name}\\{partition="([^"]*)"\\} (\\S+)$`, "gm"))) {
        const value = Number(match[2]);
        const partition = match[1] ?? "";
        byPartition.set(partition, Math.min(byPartition.get(partition) ?? value, value));
      }
    return Math.max(0, ...byPartition.values());
  };
  return { seconds: worst("change_feed_lag_seconds"), changes: worst("change_feed_lag_changes") };
}

/** (a): wrk on every API process at once, the connections split evenly. */
async function closedLoop(cluster: LocalCluster, token: string, receiver: TimingReceiver) {
  const bases = cluster.apis.map((api) => api.spec.url);
  const run = (seconds: number, tag: string) =>
    Promise.all(
      bases.map((base, i) =>
        runWrk({
          url: `${base}/graphql/graphql`,
          seconds,
          connections: Math.max(1, Math.round(CONNECTIONS / bases.length)),
          body: INSERT(`${tag}-api${i}-%n`),
          token,
        }),
      ),
    );
  await run(1, "warm");
  await Bun.sleep(1000);
  const started = Date.now();
  const results = await run(SECONDS, "load");
  const ended = Date.now();
  const rate = results.reduce((sum, r) => sum + r.requestsPerSecond, 0);
  await drained(receiver, started, Math.floor(rate * SECONDS * 0.98));
  const latencies = receiver.receipts
    .filter((r) => r.committedAt >= started && r.committedAt <= ended)
    .map((r) => r.ms);
  return {
    rate,
    roundTripP50: Math.max(...results.map((r) => r.p50Ms)),
    roundTripP99: Math.max(...results.map((r) => r.p99Ms)),
    errors: results.reduce((sum, r) => sum + r.non2xx + r.graphqlErrors, 0),
    receiptP50: percentile(latencies, 50),
    receiptP99: percentile(latencies, 99),
  };
}

/** (b): PACED_RATE mutations/s from this process, round robin over the API processes; the feed's lag sampled meanwhile. */
async function pacedLoop(cluster: LocalCluster, token: string, receiver: TimingReceiver) {
  const bases = cluster.apis.map((api) => api.spec.url);
  const started = Date.now();
  const deadline = started + SECONDS * 1000;
  let slot = 0;
  let acked = 0;
  let failed = 0;
  const writer = async () => {
    while (Date.now() < deadline) {
      const mine = slot++;
      const due = started + (mine * 1000) / PACED_RATE;
      if (due >= deadline) break;
      if (due > Date.now()) await Bun.sleep(due - Date.now());
      const response = await fetch(`${bases[mine % bases.length]}/graphql/graphql`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: INSERT(`paced-${mine}`),
      });
      const text = await response.text();
      if (response.status === 200 && !text.includes('"errors"')) acked++;
      else failed++;
    }
  };
  const lags: { seconds: number; changes: number }[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      lags.push(await feedLag(bases));
      await Bun.sleep(250);
    }
  })();
  await Promise.all(Array.from({ length: 64 }, writer));
  const ended = Date.now();
  sampling = false;
  await sampler;
  await drained(receiver, started, acked);
  const latencies = receiver.receipts
    .filter((r) => r.committedAt >= started && r.committedAt <= ended)
    .map((r) => r.ms);
  const secondsLag = lags.map((l) => l.seconds * 1000);
  return {
    achieved: (acked * 1000) / (ended - started),
    failed,
    lagP50Ms: percentile(secondsLag, 50),
    lagMaxMs: Math.max(...secondsLag),
    lagMaxChanges: Math.max(...lags.map((l) => l.changes)),
    receiptP50: percentile(latencies, 50),
    receiptP99: percentile(latencies, 99),
  };
}

ensureWrk();
const runStarted = Date.now();
const postgres = await startPrivatePostgres({
  dir: mkdtempSync(join(tmpdir(), "tds-bench-scale-out-")),
  settings: POSTGRES_SETTINGS,
});
const rows: string[] = [];
/** The closed-loop rate of the first size measured (one API process), the ratios' base. */
let firstRate: number | null = null;
try {
  for (const size of SIZES) {
    await postgres.createDatabase(`scale_${size}`);
    const receiver = startTimingReceiver();
    const phase = (what: string) =>
      console.log(`${size} API: ${what} (${((Date.now() - runStarted) / 1000).toFixed(1)} s)`);
    phase("starting the cluster");
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
      },
    );
    try {
      const token = cluster.token ?? "";
      const hook = await fetch(`${cluster.apis[0]?.spec.url}/webhooks`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({
          name: "regions",
          url: receiver.url,
          type: "graphql",
          query: "subscription { schemaRegions(operation: INSERT) { timestamp data { Name } } }",
        }),
      });
      if (hook.status !== 201) throw new Error(`the webhook answered ${hook.status}: ${await hook.text()}`);
      phase("closed loop");
      const closed = await closedLoop(cluster, token, receiver);
      phase("paced");
      const paced = await pacedLoop(cluster, token, receiver);
      phase("stopping");
      console.log(`${size} API: ${JSON.stringify({ closed, paced })}`);
      rows.push(row(size, closed, paced));
    } finally {
      await cluster.stop();
      await receiver.stop();
    }
  }
} finally {
  // The data is thrown away: an immediate shutdown skips the checkpoint (tens of seconds on a busy disk).
  postgres.killNow();
}

function row(
  size: number,
  closed: Awaited<ReturnType<typeof closedLoop>>,
  paced: Awaited<ReturnType<typeof pacedLoop>>,
): string {
  firstRate ??= closed.rate;
  const first = firstRate;
  const ms = (n: number) => `${Math.round(n)}`;
  return `| ${size} | ${Math.round(closed.rate)} | ${(closed.rate / first).toFixed(2)}× | ${ms(closed.roundTripP50)} / ${ms(closed.roundTripP99)} | ${ms(closed.receiptP50)} / ${ms(closed.receiptP99)} | ${closed.errors} | ${Math.round(paced.achieved)} | ${ms(paced.lagP50Ms)} / ${ms(paced.lagMaxMs)} ms, ≤ ${paced.lagMaxChanges} changes | ${ms(paced.receiptP50)} / ${ms(paced.receiptP99)} | ${paced.failed} |`;
}

const text = `# Scale-out on PostgreSQL

Machine: ${machine()}. Date: ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC. Command: \`bun bench/scale-out.ts ${SECONDS} ${SIZES.join(",")}\`.
Load average (1 / 5 / 15 min) before the run: ${LOAD_BEFORE}; after: ${loadavg()
  .map((l) => l.toFixed(2))
  .join(" / ")}. One run on a machine other work shares: figures move from run to run.

Setup: the local cluster (\`npm run cluster\`'s scripts/local-cluster.ts) with N API processes and ${DISPATCHERS} dispatchers, no process pinned; PostgreSQL (Debian's, one private cluster for the run, a database per N; settings other than defaults: ${Object.entries(
  POSTGRES_SETTINGS,
)
  .map(([k, v]) => `${k}=${v}`)
  .join(
    ", ",
  )}); a private Redis per N; rate limits out of reach; every mutation one Region insert, sent by one webhook to a receiver in the benchmark's process. Closed loop: wrk, ${CONNECTIONS} connections split evenly over the API processes (one wrk each, ${SECONDS} s after 1 s of warm-up); round trip: the slowest wrk's p50 / p99. Paced: ${PACED_RATE} mutations/s for ${SECONDS} s from the benchmark's process (64 writers, round robin over the API processes); feed lag sampled every 250 ms. Commit → receipt: the element's \`timestamp\` to the receiver's clock.

| API processes | mutations/s (closed loop) | vs 1 API | round trip p50 / p99 ms | commit → receipt p50 / p99 ms | errors | achieved of ${PACED_RATE}/s (paced) | feed lag p50 / max | commit → receipt p50 / p99 ms (paced) | failed (paced) |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join("\n")}

**On this 2-core machine the ratio shows overhead, not speed-up**: every API process, both dispatchers, PostgreSQL, Redis, wrk and the receiver share the same two cores, so a second or third API process adds processes, connections and cross-process wake-ups (a commit on a process without the feed's lease wakes the reader through Redis or PostgreSQL NOTIFY) without adding CPU. What scaling out buys shows on machines of their own.
`;
writeFileSync(join(import.meta.dir, "results/scale-out.md"), text);
Bun.spawnSync(
  [join(import.meta.dir, "../node_modules/.bin/biome"), "format", "--write", "bench/results/scale-out.md"],
  {
    cwd: join(import.meta.dir, ".."),
    stdout: "ignore",
  },
);
console.log(text);
