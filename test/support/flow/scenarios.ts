/**
 * The delivery scenarios of issue 9, each one function over a scale: the
 * default test suite runs them small (test/flows/), `bun bench/faults.ts`
 * runs them long and writes the figures down. A scenario starts the real
 * processes, does its damage while writers write, waits for the deliveries
 * to settle and returns its figures and, in words, whatever did not hold.
 */

import { readFileSync } from "node:fs";
import { Queue } from "bullmq";
import { connectRedis } from "../../../common/redis.ts";
import { DELIVERY_QUEUE, redisKeys } from "../../../common/redis-keys.ts";
import { type DeliveryFigures, latencyText, percentile, summarize } from "./delivery-check.ts";
import { type Flow, type FlowOptions, openFlow, type SettledFigures, type WriteRun } from "./flow.ts";
import { seededRandom } from "./writer.ts";

export interface ScenarioResult {
  name: string;
  /** What was done, in words (counts of kills, outage lengths, settings). */
  setup: string;
  writes: WriteRun;
  figures: SettledFigures;
  /** Further figures of this scenario (memory, attempts seen in the log, ...). */
  extra: Record<string, number | string>;
  /** What did not hold; empty when the scenario passed. */
  failures: string[];
}

/** Quick retries and quick takeover of a killed dispatcher's jobs, so scenarios settle in seconds. */
export const FAST_DISPATCHER_ENV = {
  DELIVERY_RETRY_SCHEDULE: "200ms,400ms,800ms,1600ms,3200ms",
  DISPATCH_LOCK_MS: "1000",
};

/** The delivery guarantee, checked on the figures; `duplicatesAllowed` for scenarios that force retries. */
export function guaranteeFailures(
  writes: WriteRun,
  figures: DeliveryFigures & { unfinished?: number },
  { duplicatesAllowed = false } = {},
): string[] {
  const failures: string[] = [];
  if ((figures.unfinished ?? 0) > 0)
    failures.push(`${figures.unfinished} deliveries not succeeded in the delivery log`);
  if (writes.rejected.length > 0)
    failures.push(`${writes.rejected.length} mutations refused: ${writes.rejected[0]?.slice(0, 300)}`);
  if (figures.lost > 0) failures.push(`${figures.lost} expected deliveries never arrived`);
  if (figures.unexpected > 0) failures.push(`${figures.unexpected} deliveries nobody expected`);
  if (figures.badSignatures > 0) failures.push(`${figures.badSignatures} bad signatures`);
  if (figures.badTimestamps > 0) failures.push(`${figures.badTimestamps} bad timestamps`);
  if (!duplicatesAllowed && figures.duplicates > 0) failures.push(`${figures.duplicates} duplicate requests`);
  if (failures.length > 0) failures.push(...figures.problems);
  return failures;
}

async function withFlow<T>(options: FlowOptions, run: (flow: Flow) => Promise<T>): Promise<T> {
  const flow = await openFlow(options);
  try {
    return await run(flow);
  } catch (error) {
    const tail = (text: string) => text.slice(-3000);
    throw new Error(
      `${error instanceof Error ? error.stack : error}\n-- api:\n${tail(flow.service.api.output())}\n-- dispatcher:\n${tail(flow.service.dispatcher.output())}`,
    );
  } finally {
    await flow.close();
  }
}

/** Resident memory of a process in MiB (Linux /proc); 0 when it is gone. */
export function residentMiB(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** CPU time a process has used so far, in ms (Linux /proc); 0 when it is gone. */
export function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/**
 * How long a process's main thread (its event loop) has run on a CPU and
 * waited, runnable, for one so far, in ms (Linux /proc schedstat); zeros when it is gone.
 */
export function mainThreadSchedule(pid: number): { runMs: number; waitMs: number } {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/schedstat`, "utf8").trim().split(" ").map(Number);
    return { runMs: (run ?? 0) / 1e6, waitMs: (wait ?? 0) / 1e6 };
  } catch {
    return { runMs: 0, waitMs: 0 };
  }
}

/** 1. Steady flow: mixed mutations from several writers, half of them inlining values. */
export async function steadyFlow(scale: { mutations: number; writers?: number; seed?: number }) {
  const writers = scale.writers ?? 4;
  return withFlow(
    { writers, style: "mixed", seed: scale.seed, service: { dispatcherEnv: FAST_DISPATCHER_ENV } },
    async (flow) => {
      const writes = await flow.write({ count: scale.mutations });
      const figures = await flow.settle(30_000);
      return {
        name: "steady flow",
        setup: `${scale.mutations} mutations (1–3 operations: insert, update, upsert, delete over Regions, Jobs, Contacts and the custom Gadgets) from ${writers} writers, ${flow.hooks.length} webhooks with filters`,
        writes,
        figures,
        extra: {},
        failures: guaranteeFailures(writes, figures),
      } satisfies ScenarioResult;
    },
  );
}

/** 2. The API killed (SIGKILL) at random moments while writers write, restarted each time. */
export async function apiKilled(scale: { durationMs: number; kills: number; seed?: number }) {
  const random = seededRandom(scale.seed ?? 7);
  return withFlow(
    {
      writers: 3,
      seed: scale.seed,
      service: { apiEnv: { FEED_LEASE_MS: "1500" }, dispatcherEnv: FAST_DISPATCHER_ENV },
    },
    async (flow) => {
      let kills = 0;
      const every = scale.durationMs / (scale.kills + 1);
      const killer = (async () => {
        while (kills < scale.kills) {
          await Bun.sleep(every * (0.5 + random()));
          await flow.service.api.kill();
          kills++;
          await Bun.sleep(50 + random() * 300);
          await flow.service.api.start();
        }
      })();
      const writes = await flow.write({
        durationMs: scale.durationMs,
        until: () => kills === scale.kills,
        recoveryTimeoutMs: 30_000,
      });
      await killer;
      const figures = await flow.settle(30_000);
      const failures = guaranteeFailures(writes, figures, { duplicatesAllowed: true });
      if (kills < scale.kills) failures.push(`the API was killed ${kills} times, not ${scale.kills}`);
      return {
        name: "API killed",
        setup: `writes for ${scale.durationMs / 1000} s from 3 writers; the API SIGKILLed ${kills} times at random moments and restarted after 50–350 ms (FEED_LEASE_MS=1500)`,
        writes,
        figures,
        extra: { kills },
        failures,
      } satisfies ScenarioResult;
    },
  );
}

/** 3. The dispatcher killed (SIGKILL) while a slow receiver holds deliveries in flight, restarted each time. */
export async function dispatcherKilled(scale: {
  mutations: number;
  kills: number;
  answerMs: number;
  dispatcherEnv?: Record<string, string>;
  seed?: number;
}) {
  return withFlow(
    {
      writers: 2,
      seed: scale.seed,
      service: { dispatcherEnv: { ...FAST_DISPATCHER_ENV, ...scale.dispatcherEnv } },
    },
    async (flow) => {
      let inFlight = 0;
      flow.respondWith(async () => {
        inFlight++;
        await Bun.sleep(scale.answerMs);
        inFlight--;
        return new Response("ok");
      });
      const writes = await flow.write({ count: scale.mutations });
      let kills = 0;
      let killedInFlight = 0;
      const recoveries: number[] = [];
      const deadline = Date.now() + 60_000 * scale.kills;
      while (kills < scale.kills && Date.now() < deadline) {
        // Mid-delivery: the receiver holds requests the dispatcher is waiting on.
        while (inFlight === 0 && Date.now() < deadline) await Bun.sleep(5);
        killedInFlight += inFlight;
        await flow.service.dispatcher.kill();
        kills++;
        await Bun.sleep(100);
        await flow.service.dispatcher.start();
        // Recovery: from the restart to the next request at the receiver (none left to send: stop killing).
        const restarted = Date.now();
        const seen = flow.requests.length;
        while (flow.requests.length === seen && Date.now() < deadline && (await flow.check()).lost > 0)
          await Bun.sleep(20);
        if (flow.requests.length === seen) break;
        recoveries.push(Date.now() - restarted);
        await Bun.sleep(scale.answerMs * 2);
      }
      const figures = await flow.settle(120_000);
      const failures = guaranteeFailures(writes, figures, { duplicatesAllowed: true });
      if (killedInFlight === 0) failures.push("no kill happened mid-delivery");
      if (kills < scale.kills)
        failures.push(`only ${kills} of ${scale.kills} kills: the deliveries ran out first`);
      return {
        name: "dispatcher killed",
        setup: `${scale.mutations} mutations; the receiver answers after ${scale.answerMs} ms; the dispatcher SIGKILLed ${kills} times with deliveries in flight and restarted after 100 ms (${Object.entries(
          { ...FAST_DISPATCHER_ENV, ...scale.dispatcherEnv },
        )
          .map(([k, v]) => `${k}=${v}`)
          .join(", ")})`,
        writes,
        figures,
        extra: {
          kills,
          "requests in flight at the kills": killedInFlight,
          "restart → next request at the receiver, median / max": `${percentile(recoveries, 50)} / ${Math.max(0, ...recoveries)} ms`,
        },
        failures,
      } satisfies ScenarioResult;
    },
  );
}

/** Jobs in the delivery queue, read straight from Redis. */
async function queuedJobCount(redisUrl: string): Promise<number> {
  const redis = connectRedis(redisUrl, () => undefined);
  const queue = new Queue(DELIVERY_QUEUE, { connection: redis, prefix: redisKeys("tds").bullPrefix });
  try {
    const counts = await queue.getJobCounts("waiting", "delayed", "prioritized", "active");
    return Object.values(counts).reduce((a, b) => a + b, 0);
  } finally {
    await queue.close();
    redis.disconnect();
  }
}

/**
 * 4. Redis away: stopped for `outageMs` while writers write (writes must keep
 * succeeding), then back; and with the API and dispatcher stopped, queued jobs
 * survive Redis being SIGKILLed and restarted from its append-only file.
 */
export async function redisOutage(scale: {
  durationMs: number;
  outageMs: number;
  queued: number;
  seed?: number;
}) {
  return withFlow(
    { writers: 3, seed: scale.seed, service: { dispatcherEnv: FAST_DISPATCHER_ENV } },
    async (flow) => {
      const failures: string[] = [];
      const outage = (async () => {
        await Bun.sleep((scale.durationMs - scale.outageMs) / 2);
        await flow.service.redis.stop();
        await Bun.sleep(scale.outageMs);
        await flow.service.redis.start();
      })();
      const during = await flow.write({ durationMs: scale.durationMs, ratePerSecond: 200 });
      await outage;
      if (during.lostAnswersCommitted + during.lostAnswersNotCommitted > 0)
        failures.push(
          `${during.lostAnswersCommitted + during.lostAnswersNotCommitted} writes got no answer during the outage`,
        );
      const afterOutage = await flow.settle(60_000);
      failures.push(...guaranteeFailures(during, afterOutage, { duplicatesAllowed: true }));

      // Part two: jobs that only Redis holds.
      await flow.service.dispatcher.stop();
      const queuedWrites = await flow.write({ count: scale.queued });
      const expectedJobs = (await flow.check()).lost;
      const deadline = Date.now() + 30_000;
      let queued = await queuedJobCount(flow.service.redis.url);
      while (queued < expectedJobs && Date.now() < deadline) {
        await Bun.sleep(50);
        queued = await queuedJobCount(flow.service.redis.url);
      }
      await flow.service.api.stop();
      await flow.service.redis.kill();
      await flow.service.redis.start();
      const survived = await queuedJobCount(flow.service.redis.url);
      if (survived < expectedJobs)
        failures.push(`${expectedJobs} jobs queued, ${survived} after the Redis restart`);
      // Only the dispatcher runs: whatever arrives now came out of Redis's file.
      await flow.service.dispatcher.start();
      const fromAof = await flow.settle(60_000, { log: false });
      if (fromAof.lost > 0)
        failures.push(`${fromAof.lost} queued deliveries did not arrive from the restarted Redis`);
      await flow.service.api.start();
      const figures = await flow.settle(30_000);
      const writes = {
        ...during,
        sent: during.sent + queuedWrites.sent,
        acked: during.acked + queuedWrites.acked,
        rejected: [...during.rejected, ...queuedWrites.rejected],
      };
      failures.push(...guaranteeFailures(writes, figures, { duplicatesAllowed: true }));
      return {
        name: "Redis outage",
        setup: `writes at 200/s for ${scale.durationMs / 1000} s from 3 writers with Redis stopped for ${scale.outageMs / 1000} s in the middle; then ${scale.queued} mutations queued with the dispatcher stopped, the API stopped, Redis SIGKILLed and restarted from its AOF, the dispatcher started alone`,
        writes,
        figures,
        extra: {
          "writes during the outage answered": `${during.acked} of ${during.sent}`,
          "jobs queued before the Redis kill": queued,
          "jobs after the restart": survived,
        },
        failures: [...new Set(failures)],
      } satisfies ScenarioResult;
    },
  );
}

/** 5. The receiver down (connections refused), then back within the retry window. */
export async function receiverOutage(scale: { mutations: number; downMs: number; seed?: number }) {
  // Six attempts over at least 12 s (jitter −20%): the outage must end well within that.
  const schedule = "500ms,1s,2s,4s,8s";
  return withFlow(
    {
      writers: 2,
      seed: scale.seed,
      service: { dispatcherEnv: { ...FAST_DISPATCHER_ENV, DELIVERY_RETRY_SCHEDULE: schedule } },
    },
    async (flow) => {
      await flow.receiverDown();
      const comesBack = (async () => {
        await Bun.sleep(scale.downMs);
        flow.receiverUp();
      })();
      const writes = await flow.write({ count: scale.mutations });
      await comesBack;
      const figures = await flow.settle(30_000);
      const failures = guaranteeFailures(writes, figures, { duplicatesAllowed: true });
      const logged = await flow.deliveryLog();
      const retried = logged.filter((d) => d.attemptCount > 1);
      if (logged.length !== figures.expected)
        failures.push(`the log lists ${logged.length} deliveries, ${figures.expected} expected`);
      if (retried.length === 0) failures.push("no delivery needed a retry: the outage was not seen");
      for (const d of logged) {
        const last = d.attempts[d.attempts.length - 1];
        const earlier = d.attempts.slice(0, -1);
        if (
          d.attempts.length !== d.attemptCount ||
          !last ||
          last.statusCode !== 200 ||
          earlier.some((a) => !a.error)
        ) {
          failures.push(
            `a delivery's attempts do not show the outage then success: ${JSON.stringify(d).slice(0, 400)}`,
          );
          break;
        }
      }
      return {
        name: "receiver outage",
        setup: `${scale.mutations} mutations from the moment the receiver starts refusing connections; it is back ${scale.downMs / 1000} s later; retry schedule ${schedule}`,
        writes,
        figures,
        extra: {
          "deliveries in the log": logged.length,
          "deliveries retried": retried.length,
          "attempts logged": logged.reduce((n, d) => n + d.attemptCount, 0),
          "most attempts of one delivery": Math.max(0, ...logged.map((d) => d.attemptCount)),
        },
        failures,
      } satisfies ScenarioResult;
    },
  );
}

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
