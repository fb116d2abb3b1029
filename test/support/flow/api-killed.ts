/** Scenario 2, the API killed (test/flows/api-killed.test.ts; long: `bun bench/faults.ts api-kill`). */
import { FAST_DISPATCHER_ENV, guaranteeFailures, type ScenarioResult, withFlow } from "./scenario.ts";
import { seededRandom } from "./writer.ts";

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
