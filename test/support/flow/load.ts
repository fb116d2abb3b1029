/** Scenario 8, load (test/flows/load.test.ts; long: `bun bench/faults.ts load` and `load-one-endpoint`). */
import { latencyText, percentile, summarize } from "./delivery-check.ts";
import { cpuMs, mainThreadSchedule, residentMiB } from "./process-stats.ts";
import { guaranteeFailures, type ScenarioResult, withFlow } from "./scenario.ts";
import type { WriteRun } from "./write-run.ts";

/** Two write runs, one after the other, as one. */
function joinRuns(a: WriteRun, b: WriteRun): WriteRun {
  return {
    sent: a.sent + b.sent,
    acked: a.acked + b.acked,
    lostAnswersCommitted: a.lostAnswersCommitted + b.lostAnswersCommitted,
    lostAnswersNotCommitted: a.lostAnswersNotCommitted + b.lostAnswersNotCommitted,
    rejected: [...a.rejected, ...b.rejected],
    roundTrips: [...a.roundTrips, ...b.roundTrips],
    elapsedMs: a.elapsedMs + b.elapsedMs,
  };
}

/**
 * 8. Load: `rate` single-operation mutations/s, each matched by a webhook, for
 * `durationMs`; latency from commit to receipt, memory sampled every second.
 * With `warmupMs`, the same pace runs that long first (freshly started
 * processes compile their code and open their connections meanwhile): its
 * deliveries are checked like the others, its latency reported apart.
 */
export async function load(scale: {
  rate: number;
  durationMs: number;
  warmupMs?: number;
  writers?: number;
  /** One receiver per webhook (each its own endpoint); default true. */
  receiverPerHook?: boolean;
  apiEnv?: Record<string, string>;
  dispatcherEnv?: Record<string, string>;
  seed?: number;
}) {
  const writers = scale.writers ?? 8;
  return withFlow(
    {
      writers,
      profile: "load",
      seed: scale.seed,
      receiverPerHook: scale.receiverPerHook ?? true,
      service: { apiEnv: scale.apiEnv, dispatcherEnv: scale.dispatcherEnv },
    },
    async (flow) => {
      const { api, dispatcher, redis } = flow.service;
      const warmup = scale.warmupMs
        ? await flow.write({ durationMs: scale.warmupMs, ratePerSecond: scale.rate })
        : null;
      const samples: { api: number; dispatcher: number; redis: number }[] = [];
      const sample = () =>
        samples.push({
          api: residentMiB(api.pid()),
          dispatcher: residentMiB(dispatcher.pid()),
          redis: residentMiB(redis.pid()),
        });
      sample();
      const sampler = setInterval(sample, 1000);
      const pids = [api.pid(), dispatcher.pid(), redis.pid(), process.pid];
      const cpuBefore = pids.map(cpuMs);
      const scheduleBefore = pids.map(mainThreadSchedule);
      const started = Date.now();
      let writes: WriteRun;
      try {
        writes = await flow.write({ durationMs: scale.durationMs, ratePerSecond: scale.rate });
      } finally {
        clearInterval(sampler);
      }
      // Over the writes only: the event loops' share of the wall clock on a CPU and waiting for one.
      const shares = pids.map((pid, i) => {
        const { runMs, waitMs } = mainThreadSchedule(pid);
        const before = scheduleBefore[i] ?? { runMs: 0, waitMs: 0 };
        const percent = (ms: number) => Math.round((ms / writes.elapsedMs) * 100);
        return `${percent(runMs - before.runMs)} / ${percent(waitMs - before.waitMs)}`;
      });
      const figures = await flow.settle(60_000);
      const [apiCpu, dispatcherCpu, redisCpu, ownCpu] = pids.map(
        (pid, i) => cpuMs(pid) - (cpuBefore[i] ?? 0),
      );
      const cores = (ms = 0) => (ms / (Date.now() - started)).toFixed(2);
      sample();
      const failures = guaranteeFailures(writes, figures);
      const latencyOf = (measured: boolean) =>
        summarize(figures.receipts.filter((r) => r.committedAt >= started === measured).map((r) => r.ms));
      const measured = latencyOf(true);
      const achieved = (writes.acked / writes.elapsedMs) * 1000;
      const mib = (n: number | undefined) => Math.round(n ?? 0);
      const third = Math.max(1, Math.floor(samples.length / 3));
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
      const growth = (key: "api" | "dispatcher" | "redis") =>
        mean(samples.slice(-third).map((s) => s[key])) - mean(samples.slice(0, third).map((s) => s[key]));
      return {
        name: scale.receiverPerHook === false ? "load, one endpoint" : "load",
        setup: `${scale.rate} mutations/s for ${scale.durationMs / 1000} s${warmup ? ` after ${(scale.warmupMs ?? 0) / 1000} s of warm-up at the same pace (CPU and memory from the end of the warm-up)` : ""} from ${writers} writers (one operation each on Regions or Gadgets, each matched by 1–2 webhooks); ${(scale.receiverPerHook ?? true) ? "each webhook at its own receiver (its own endpoint)" : "every webhook at one receiver (one endpoint, default limit of 8 in flight)"}; default API settings${scale.apiEnv ? ` but ${JSON.stringify(scale.apiEnv)}` : ""}; default dispatcher settings${scale.dispatcherEnv ? ` but ${JSON.stringify(scale.dispatcherEnv)}` : ""}; log level warn`,
        writes: warmup ? joinRuns(warmup, writes) : writes,
        figures: { ...figures, latency: measured },
        extra: {
          ...(warmup && {
            "warm-up's commit → receipt p50 / p99 / max (its deliveries counted above, not in that latency)":
              latencyText(latencyOf(false)),
          }),
          "mutations/s achieved": Math.round(achieved),
          "mutation round trip p50 / p99 (ms)": `${percentile(writes.roundTrips, 50)} / ${percentile(writes.roundTrips, 99)}`,
          "CPU cores used, writes and settling (api / dispatcher / redis / this test process)": `${cores(apiCpu)} / ${cores(dispatcherCpu)} / ${cores(redisCpu)} / ${cores(ownCpu)}`,
          "CPU per mutation (api) / per delivery (dispatcher, redis)": `${((apiCpu ?? 0) / writes.acked).toFixed(2)} / ${((dispatcherCpu ?? 0) / measured.samples).toFixed(2)}, ${((redisCpu ?? 0) / measured.samples).toFixed(2)} ms`,
          "main thread on a CPU / waiting for one, % of the writes' wall time (api, dispatcher, redis, this test process)":
            shares.join(", "),
          "RSS MiB api start → peak → end": `${mib(samples[0]?.api)} → ${mib(Math.max(...samples.map((s) => s.api)))} → ${mib(samples.at(-1)?.api)}`,
          "RSS MiB dispatcher start → peak → end": `${mib(samples[0]?.dispatcher)} → ${mib(Math.max(...samples.map((s) => s.dispatcher)))} → ${mib(samples.at(-1)?.dispatcher)}`,
          "RSS MiB redis start → peak → end": `${mib(samples[0]?.redis)} → ${mib(Math.max(...samples.map((s) => s.redis)))} → ${mib(samples.at(-1)?.redis)}`,
          "RSS growth MiB, last third vs first third (api / dispatcher / redis)": `${growth("api").toFixed(0)} / ${growth("dispatcher").toFixed(0)} / ${growth("redis").toFixed(0)}`,
        },
        failures,
      } satisfies ScenarioResult;
    },
  );
}
