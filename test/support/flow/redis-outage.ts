/** Scenario 4, Redis away (test/flows/redis-outage.test.ts; long: `bun bench/faults.ts redis`). */
import { Queue } from "bullmq";
import { connectRedis } from "../../../common/redis.ts";
import { DELIVERY_QUEUE, redisKeys } from "../../../common/redis-keys.ts";
import { FAST_DISPATCHER_ENV, guaranteeFailures, type ScenarioResult, withFlow } from "./scenario.ts";

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
      // Every connection's errors are handled (logged as warnings): ioredis prints the unhandled ones raw.
      for (const service of [flow.service.api, flow.service.dispatcher])
        if (service.output().includes("Unhandled error event"))
          failures.push(`${service.name}: a Redis connection's errors went unhandled during the outage`);

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
