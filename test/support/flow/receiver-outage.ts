/**
 * Scenario 5, the receiver down (test/flows/receiver-outage.test.ts;
 * long: `bun bench/faults.ts receiver`).
 */
import { FAST_DISPATCHER_ENV, guaranteeFailures, type ScenarioResult, withFlow } from "./scenario.ts";

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
