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
import { startService } from "../service-processes.ts";
import { latencyText, summarize } from "./delivery-check.ts";
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
  seed?: number;
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

/**
 * How long a fault at `at` held deliveries up: from it to the first receipt of a change committed
 * after it, and the slowest commit → receipt of the changes committed in the 5 s after it.
 */
function recovery(receipts: { committedAt: number; ms: number }[], at: number): string {
  const after = receipts.filter((r) => r.committedAt >= at);
  if (after.length === 0) return "no change committed after it";
  const first = Math.min(...after.map((r) => r.committedAt + r.ms)) - at;
  const slowest = Math.max(...after.filter((r) => r.committedAt < at + 5000).map((r) => r.ms));
  return `${first} ms to the first delivery of a later commit; slowest commit → receipt in the 5 s after: ${slowest} ms`;
}

export async function scaleOut(scale: ScaleOutScale): Promise<ScenarioResult> {
  const service = await startService({
    engine: "postgres",
    apiEnv: { FEED_LEASE_MS: "1500" },
    dispatcherEnv: FAST_DISPATCHER_ENV,
  });
  let tenants: WritingTenant[] = [];
  let balancer: ReturnType<typeof startBalancer> | null = null;
  try {
    const more = await Promise.all(Array.from({ length: scale.apis - 1 }, () => service.startApi()));
    await Promise.all(Array.from({ length: scale.dispatchers - 1 }, () => service.startDispatcher()));
    balancer = startBalancer({ backends: [service.base, ...more.map((api) => api.base)], port: 0 });
    const respond = async () => {
      await Bun.sleep(scale.answerMs);
      return new Response("ok");
    };
    tenants = await openTenants(service, balancer.url, scale.tenants, { respond, seed: scale.seed });

    const moments = { killedAt: 0, restartedAt: 0, redisStoppedAt: 0, redisStartedAt: 0 };
    let faultsDone = false;
    const faults = (async () => {
      await Bun.sleep(scale.durationMs * 0.25);
      moments.killedAt = Date.now();
      await Promise.all([service.api.kill(), service.dispatcher.kill()]);
      await Bun.sleep(300);
      await Promise.all([service.api.start(), service.dispatcher.start()]);
      moments.restartedAt = Date.now();
      const redisAt = moments.killedAt + scale.durationMs * 0.4;
      if (redisAt > Date.now()) await Bun.sleep(redisAt - Date.now());
      moments.redisStoppedAt = Date.now();
      await service.redis.stop();
      await Bun.sleep(scale.outageMs);
      await service.redis.start();
      moments.redisStartedAt = Date.now();
      faultsDone = true;
    })();
    const writes = await writeAll(tenants, {
      durationMs: scale.durationMs,
      ratePerSecond: scale.ratePerSecond,
      until: () => faultsDone,
    });
    await faults;
    const figures = await settle(tenants, 60_000);
    const failures = guaranteeFailures(writes, figures, { duplicatesAllowed: true });
    const answered = balancer.answered();
    if (answered.some((n) => n === 0))
      failures.push(`an API process answered nothing: ${answered.join(", ")}`);
    const outOfOrder = tenants.reduce((sum, t) => sum + receivedOutOfCommitOrder(t.receiver.requests), 0);
    const hooks = tenants.reduce((sum, t) => sum + t.hooks.length, 0);
    return {
      name: "scale-out: API and dispatcher killed, Redis restarted",
      setup: `${scale.apis} API processes and ${scale.dispatchers} dispatchers on one PostgreSQL (a database of its own on a private cluster) and one Redis; ${scale.tenants} tenants, each with ${hooks / scale.tenants} webhooks at a receiver of its own answering after ${scale.answerMs} ms, write mixed mutations at ${scale.ratePerSecond}/s in all for ${scale.durationMs / 1000} s through a round-robin balancer (scripts/balancer.ts); at a quarter of the run API 1 (the first to take the feed lease) and dispatcher 1 are SIGKILLed together and started again 300 ms later, then Redis is stopped (SIGTERM) for ${scale.outageMs / 1000} s and started again (FEED_LEASE_MS=1500, ${Object.entries(
        FAST_DISPATCHER_ENV,
      )
        .map(([k, v]) => `${k}=${v}`)
        .join(", ")})`,
      writes,
      figures,
      extra: {
        "requests answered per API process (through the balancer)": answered.join(" / "),
        "mutation round trip p50 / p99 / max": latencyText(summarize(writes.roundTrips)),
        "kill → both processes ready again": `${moments.restartedAt - moments.killedAt} ms`,
        "recovery after the kills": recovery(figures.receipts, moments.killedAt),
        [`recovery after Redis stopped (for ${scale.outageMs} ms)`]: recovery(
          figures.receipts,
          moments.redisStoppedAt,
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
