/**
 * Scenario 3, the dispatcher killed (test/flows/dispatcher-killed.test.ts;
 * long: `bun bench/faults.ts dispatcher-kill`).
 */
import { OUTCOME_UNKNOWN_ERROR } from "../../../common/delivery-log/delivery-log.ts";
import type { ReceivedRequest } from "../receiver.ts";
import { percentile } from "./delivery-check.ts";
import type { LoggedDelivery } from "./flow.ts";
import { FAST_DISPATCHER_ENV, guaranteeFailures, type ScenarioResult, withFlow } from "./scenario.ts";

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
      const logged = attemptsAgainstRequests(await flow.deliveryLog(), flow.requests);
      if (logged.unlogged > 0)
        failures.push(`${logged.unlogged} requests the receiver got are not attempts in the delivery log`);
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
          "attempts of unknown outcome in the log (left in flight by the kills)": logged.unknown,
          "requests at the receiver not in the delivery log": logged.unlogged,
        },
        failures,
      } satisfies ScenarioResult;
    },
  );
}

/**
 * Every request that left a dispatcher must be an attempt in the delivery log (one whose request
 * never arrived may be logged too): per delivery, the requests received beyond its logged attempts
 * are `unlogged`. `unknown` counts the attempts logged as of unknown outcome.
 */
function attemptsAgainstRequests(log: LoggedDelivery[], requests: ReceivedRequest[]) {
  const received = new Map<string, number>();
  for (const request of requests) {
    const id = request.headers["service-request-id"] ?? "";
    received.set(id, (received.get(id) ?? 0) + 1);
  }
  const attempts = new Map(log.map((d) => [d.id, d.attempts.length]));
  let unlogged = 0;
  for (const [id, count] of received) unlogged += Math.max(0, count - (attempts.get(id) ?? 0));
  const unknown = log.flatMap((d) => d.attempts).filter((a) => a.error === OUTCOME_UNKNOWN_ERROR).length;
  return { unlogged, unknown };
}
