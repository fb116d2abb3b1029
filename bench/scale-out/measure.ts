/**
 * bench/scale-out.ts's measurements on one running cluster: a receiver timing each delivered
 * element from its commit, the change feed's lag read from the API processes' metrics, a closed
 * loop (wrk on every API process at once) and a paced loop (this process's writers).
 */
import type { LocalCluster } from "../../scripts/local-cluster.ts";
import { mainThreadSchedule } from "../../test/support/flow/process-stats.ts";
import {
  busyCpuSeconds,
  cpuSecondsNamed,
  cpuSecondsOf,
  cpuSecondsOfProcess,
  type MachineTimes,
  machineTimes,
} from "../compare/machine-load.ts";
import { runWrk } from "../run-wrk.ts";
import { percentile } from "../support.ts";

/** Every mutation inserts one Region (the webhook's one element); names are unique per request. */
const insert = (name: string) =>
  JSON.stringify({
    query:
      'mutation Insert($name: String!) { schema { insertRegions(input: {Name: $name, Timezone: "UTC"}) } }',
    variables: { name },
  });

/** The webhook the receiver gets every insert from. */
export const REGIONS_WEBHOOK_QUERY =
  "subscription { schemaRegions(operation: INSERT) { timestamp data { Name } } }";

/** A receiver of the webhook's deliveries: each element's commit time and its commit → receipt, ms. */
export function startTimingReceiver() {
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
export type TimingReceiver = ReturnType<typeof startTimingReceiver>;

/** The commit → receipt times of the elements committed in [from, to], once `count` arrived (or 30 s passed). */
async function receiptsBetween(receiver: TimingReceiver, from: number, to: number, count: number) {
  const between = () => receiver.receipts.filter((r) => r.committedAt >= from && r.committedAt <= to);
  const deadline = Date.now() + 30_000;
  while (between().length < count && Date.now() < deadline) await Bun.sleep(100);
  return between().map((r) => r.ms);
}

/** The feed's lag now: per partition the smallest figure over the API processes (the reader's is fresh, the others' saved), then the largest partition. */
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

export interface ClosedLoopResult {
  rate: number;
  roundTripP50: number;
  roundTripP99: number;
  errors: number;
  /** Commit → receipt of the turn's mutations, ms. */
  receipts: number[];
  /** Each API process's event loop: % of the turn on a CPU / waiting, runnable, for one. */
  eventLoops: { runPercent: number; waitPercent: number }[];
}

/** wrk on every API process at once for `seconds`, `connections` split evenly (`tag` keeps names unique). */
export async function closedLoop(
  cluster: LocalCluster,
  token: string,
  receiver: TimingReceiver,
  options: { seconds: number; connections: number; tag: string },
): Promise<ClosedLoopResult> {
  const bases = cluster.apis.map((api) => api.spec.url);
  const pids = cluster.apis.map((api) => api.pid());
  const before = pids.map(mainThreadSchedule);
  const started = Date.now();
  const results = await Promise.all(
    bases.map((base, i) =>
      runWrk({
        url: `${base}/graphql/graphql`,
        seconds: options.seconds,
        connections: Math.max(1, Math.round(options.connections / bases.length)),
        body: insert(`${options.tag}-api${i}-%n`),
        token,
      }),
    ),
  );
  const ended = Date.now();
  const eventLoops = pids.map((pid, i) => {
    const now = mainThreadSchedule(pid);
    const percent = (ms: number) => Math.round((ms / (ended - started)) * 100);
    return {
      runPercent: percent(now.runMs - (before[i]?.runMs ?? 0)),
      waitPercent: percent(now.waitMs - (before[i]?.waitMs ?? 0)),
    };
  });
  const rate = results.reduce((sum, r) => sum + r.requestsPerSecond, 0);
  return {
    eventLoops,
    rate,
    roundTripP50: Math.max(...results.map((r) => r.p50Ms)),
    roundTripP99: Math.max(...results.map((r) => r.p99Ms)),
    errors: results.reduce((sum, r) => sum + r.non2xx + r.graphqlErrors, 0),
    receipts: await receiptsBetween(receiver, started, ended, Math.floor(rate * options.seconds * 0.98)),
  };
}

/**
 * `rate` mutations/s for `seconds` from 64 writers here, round robin over the API processes; the
 * feed's lag sampled every 250 ms. Without a `receiver` (no webhook yet), no receipts are awaited.
 */
export async function pacedLoop(
  cluster: LocalCluster,
  token: string,
  receiver: TimingReceiver | null,
  options: { seconds: number; rate: number },
) {
  const bases = cluster.apis.map((api) => api.spec.url);
  const started = Date.now();
  const deadline = started + options.seconds * 1000;
  let slot = 0;
  let acked = 0;
  let failed = 0;
  const writer = async () => {
    for (;;) {
      const mine = slot++;
      const due = started + (mine * 1000) / options.rate;
      if (due >= deadline) return;
      if (due > Date.now()) await Bun.sleep(due - Date.now());
      const response = await fetch(`${bases[mine % bases.length]}/graphql/graphql`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: insert(`paced-${mine}`),
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
  const machineBefore = machineTimes();
  await Promise.all(Array.from({ length: 64 }, writer));
  const ended = Date.now();
  const cpu = cpuSplit(cluster, machineBefore, machineTimes(), (ended - started) / 1000);
  sampling = false;
  await sampler;
  const receipts = receiver ? await receiptsBetween(receiver, started, ended, acked) : [];
  const lagMs = lags.map((l) => l.seconds * 1000);
  return {
    achieved: (acked * 1000) / (ended - started),
    failed,
    lagP50Ms: percentile(lagMs, 50),
    lagMaxMs: Math.max(...lagMs),
    lagMaxChanges: Math.max(...lags.map((l) => l.changes)),
    receiptP50: percentile(receipts, 50),
    receiptP99: percentile(receipts, 99),
    cpu,
  };
}

/** Who used the CPUs over `seconds` (in cores: 1.0 is one core busy throughout), and how busy they were in all. */
export interface CpuSplit {
  apis: number;
  dispatchers: number;
  postgres: number;
  redis: number;
  /** This process: the paced writers and the receiver. */
  bench: number;
  other: number;
}

function cpuSplit(
  cluster: LocalCluster,
  before: MachineTimes,
  after: MachineTimes,
  seconds: number,
): CpuSplit {
  const of = (pids: number[]) => cpuSecondsOf(before, after, pids) / seconds;
  const split = {
    apis: of(cluster.apis.map((api) => api.pid())),
    dispatchers: of(cluster.dispatchers.map((d) => d.pid())),
    postgres: cpuSecondsNamed(before, after, "postgres") / seconds,
    redis: cpuSecondsNamed(before, after, "redis-server") / seconds,
    bench: cpuSecondsOfProcess(before, after, process.pid) / seconds,
  };
  const counted = Object.values(split).reduce((sum, n) => sum + n, 0);
  return { ...split, other: Math.max(0, busyCpuSeconds(before, after) / seconds - counted) };
}
