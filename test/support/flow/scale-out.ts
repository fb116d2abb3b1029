/**
 * Several API processes and dispatchers on one PostgreSQL and one Redis
 * (issue 29; test/flows/scale-out.test.ts; long: `bun bench/faults.ts
 * scale-out`). Many tenants write through the round-robin balancer
 * (scripts/balancer.ts), so their mutations are committed by every API
 * process, each tenant's webhooks at a receiving server of its own; mid-load,
 * (a) API 1 (the first to take the feed lease) and dispatcher 1 are SIGKILLed
 * and started again, then (b) Redis is stopped and started again. Every
 * committed change must reach its receiver; duplicates are counted, and how
 * long each fault held deliveries up.
 */
import { startBalancer } from "../../../scripts/balancer.ts";
import { type RunningService, type ServiceProcess, startService } from "../service-processes.ts";
import { latencyText, percentile, summarize } from "./delivery-check.ts";
import type { SettledFigures } from "./flow.ts";
import { FAST_DISPATCHER_ENV, guaranteeFailures, type ScenarioResult } from "./scenario.ts";
import {
  checkTenants,
  openTenants,
  receivedOutOfCommitOrder,
  unfinishedDeliveries,
  type WritingTenant,
  writeAll,
} from "./tenant-writers.ts";

export interface ScaleOutScale {
  apis: number;
  dispatchers: number;
  tenants: number;
  durationMs: number;
  /** Mutations per second over all tenants. */
  ratePerSecond: number;
  /** How long each receiver takes to answer (deliveries are in flight when the dispatcher dies). */
  answerMs: number;
  /** How long Redis stays stopped. */
  outageMs: number;
  /**
   * Fault rounds, spread over the run (default 1): round r SIGKILLs API process r+1 and dispatcher
   * r+1 (in turn) and starts them again, then stops and starts Redis.
   */
  rounds?: number;
  seed?: number;
}

/** When each fault happened. */
interface FaultMoments {
  kills: { at: number; readyAgainMs: number }[];
  /** Redis down (its stop done) and up again (its start done). */
  redisOutages: { stoppedAt: number; startedAt: number }[];
}

/** Waits (at most `timeoutMs`) until nothing is lost and the delivery log shows every delivery succeeded. */
async function settle(tenants: WritingTenant[], timeoutMs: number): Promise<SettledFigures> {
  const started = Date.now();
  let figures = await checkTenants(tenants);
  while (figures.lost > 0 && Date.now() - started < timeoutMs) {
    await Bun.sleep(200);
    figures = await checkTenants(tenants);
  }
  const lastReceipt = Math.max(
    started,
    ...tenants.flatMap((t) => t.receiver.requests.map((r) => r.receivedAt)),
  );
  const receivedMs = figures.lost > 0 ? Date.now() - started : lastReceipt - started;
  let unfinished = await unfinishedDeliveries(tenants);
  while (unfinished > 0 && Date.now() - started < timeoutMs) {
    await Bun.sleep(300);
    unfinished = await unfinishedDeliveries(tenants);
  }
  // Deliveries finishing meanwhile may have been sent again: count them too.
  figures = await checkTenants(tenants);
  return { ...figures, receivedMs, settleMs: Date.now() - started, unfinished };
}

type Receipts = { committedAt: number; ms: number }[];

/** How a fault is measured: the changes committed in [from, to] and when the service was whole again. */
interface FaultWindow {
  from: number;
  to: number;
  /** From when the first delivery is timed. */
  since: number;
  /** The slowest commit → receipt is taken over the changes committed in [from, slowestTo]. */
  slowestTo: number;
}

/**
 * How long a fault held deliveries up: from `since` to the first receipt of a change committed in
 * the window, and the slowest commit → receipt of the changes committed around it.
 */
function recovery(receipts: Receipts, window: FaultWindow) {
  const inWindow = receipts.filter((r) => r.committedAt >= window.from && r.committedAt <= window.to);
  const around = receipts.filter((r) => r.committedAt >= window.from && r.committedAt <= window.slowestTo);
  return {
    first:
      inWindow.length === 0
        ? Number.NaN
        : Math.min(...inWindow.map((r) => r.committedAt + r.ms)) - window.since,
    slowest: around.length === 0 ? Number.NaN : Math.max(...around.map((r) => r.ms)),
  };
}

/** The recoveries from the faults of `windows`: median and worst of each figure. */
function recoveries(receipts: Receipts, windows: FaultWindow[], first: string): string {
  const each = windows.map((window) => recovery(receipts, window));
  const text = (values: number[]) =>
    values.length === 1
      ? `${values[0]} ms`
      : `${percentile(values, 50)} / ${Math.max(...values)} ms (median / worst)`;
  return `${first} ${text(each.map((r) => r.first))}; slowest commit → receipt of the changes committed from the fault to 5 s after ${text(each.map((r) => r.slowest))}`;
}

/** Runs the fault rounds (see ScaleOutScale.rounds) over `durationMs`; resolves once the last is over. */
async function runFaults(
  service: RunningService,
  apis: ServiceProcess[],
  dispatchers: ServiceProcess[],
  scale: ScaleOutScale,
): Promise<FaultMoments> {
  const rounds = scale.rounds ?? 1;
  const started = Date.now();
  const moments: FaultMoments = { kills: [], redisOutages: [] };
  const until = async (fraction: number) => {
    const at = started + scale.durationMs * fraction;
    if (at > Date.now()) await Bun.sleep(at - Date.now());
  };
  for (let round = 0; round < rounds; round++) {
    await until((round + 0.25) / rounds);
    const api = apis[round % apis.length] as ServiceProcess;
    const dispatcher = dispatchers[round % dispatchers.length] as ServiceProcess;
    const at = Date.now();
    await Promise.all([api.kill(), dispatcher.kill()]);
    await Bun.sleep(300);
    await Promise.all([api.start(), dispatcher.start()]);
    moments.kills.push({ at, readyAgainMs: Date.now() - at });
    await until((round + 0.65) / rounds);
    await service.redis.stop();
    const stoppedAt = Date.now();
    await Bun.sleep(scale.outageMs);
    await service.redis.start();
    moments.redisOutages.push({ stoppedAt, startedAt: Date.now() });
  }
  return moments;
}

export async function scaleOut(scale: ScaleOutScale): Promise<ScenarioResult> {
  const rounds = scale.rounds ?? 1;
  const service = await startService({
    engine: "postgres",
    apiEnv: { FEED_LEASE_MS: "1500" },
    dispatcherEnv: FAST_DISPATCHER_ENV,
  });
  let tenants: WritingTenant[] = [];
  let balancer: ReturnType<typeof startBalancer> | null = null;
  try {
    const more = await Promise.all(Array.from({ length: scale.apis - 1 }, () => service.startApi()));
    const moreDispatchers = await Promise.all(
      Array.from({ length: scale.dispatchers - 1 }, () => service.startDispatcher()),
    );
    balancer = startBalancer({ backends: [service.base, ...more.map((api) => api.base)], port: 0 });
    const respond = async () => {
      await Bun.sleep(scale.answerMs);
      return new Response("ok");
    };
    tenants = await openTenants(service, balancer.url, scale.tenants, { respond, seed: scale.seed });

    let faultsDone = false;
    const faults = runFaults(
      service,
      [service.api, ...more.map((m) => m.api)],
      [service.dispatcher, ...moreDispatchers.map((m) => m.dispatcher)],
      scale,
    ).finally(() => {
      faultsDone = true;
    });
    const writes = await writeAll(tenants, {
      durationMs: scale.durationMs,
      ratePerSecond: scale.ratePerSecond,
      until: () => faultsDone,
    });
    const moments = await faults;
    const figures = await settle(tenants, 60_000);
    const failures = guaranteeFailures(writes, figures, { duplicatesAllowed: true });
    const answered = balancer.answered();
    if (answered.some((n) => n === 0))
      failures.push(`an API process answered nothing: ${answered.join(", ")}`);
    const outOfOrder = tenants.reduce((sum, t) => sum + receivedOutOfCommitOrder(t.receiver.requests), 0);
    const hooks = tenants.reduce((sum, t) => sum + t.hooks.length, 0);
    return {
      name: "scale-out: API processes and dispatchers killed, Redis restarted",
      setup: `${scale.apis} API processes and ${scale.dispatchers} dispatchers on one PostgreSQL (a database of its own on a private cluster) and one Redis; ${scale.tenants} tenants, each with ${hooks / scale.tenants} webhooks at a receiver of its own answering after ${scale.answerMs} ms, write mixed mutations at ${scale.ratePerSecond}/s in all for ${scale.durationMs / 1000} s through a round-robin balancer (scripts/balancer.ts); ${rounds === 1 ? "at a quarter of the run API 1 (the first to take the feed lease) and dispatcher 1 are SIGKILLed together and started again 300 ms later, then Redis is stopped (SIGTERM)" : `${rounds} rounds spread over the run, each SIGKILLing the next API process (API 1, the first to take the feed lease, first) and the next dispatcher together and starting them again 300 ms later, then stopping Redis (SIGTERM)`} for ${scale.outageMs / 1000} s and starting it again (FEED_LEASE_MS=1500, ${Object.entries(
        FAST_DISPATCHER_ENV,
      )
        .map(([k, v]) => `${k}=${v}`)
        .join(", ")})`,
      writes,
      figures,
      extra: {
        "requests answered per API process (through the balancer)": answered.join(" / "),
        "mutation round trip p50 / p99 / max": latencyText(summarize(writes.roundTrips)),
        "kill → both processes ready again": moments.kills.map((k) => `${k.readyAgainMs} ms`).join(", "),
        "recovery after the kills": recoveries(
          figures.receipts,
          moments.kills.map(({ at }) => ({
            from: at,
            to: Number.POSITIVE_INFINITY,
            since: at,
            slowestTo: at + 5000,
          })),
          "kill → first delivery of a change committed after it",
        ),
        [`recovery after Redis restarts (down ${scale.outageMs} ms)`]: recoveries(
          figures.receipts,
          moments.redisOutages.map(({ stoppedAt, startedAt }) => ({
            from: stoppedAt,
            to: startedAt,
            since: startedAt,
            slowestTo: stoppedAt + 5000,
          })),
          "Redis up again → first delivery of a change committed while it was down",
        ),
        "deliveries received before a delivery of an earlier commit of the same webhook (order is not promised)":
          outOfOrder,
      },
      failures,
    };
  } catch (error) {
    const tail = (text: string) => text.slice(-3000);
    throw new Error(
      `${error instanceof Error ? error.stack : error}\n-- api 1:\n${tail(service.api.output())}\n-- dispatcher 1:\n${tail(service.dispatcher.output())}`,
    );
  } finally {
    await balancer?.stop();
    await Promise.all(tenants.map((t) => t.receiver.stop()));
    await service.stop();
  }
}
