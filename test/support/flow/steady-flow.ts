/** Scenario 1, steady flow (test/flows/steady-flow.test.ts; long: `bun bench/faults.ts steady`). */
import { FAST_DISPATCHER_ENV, guaranteeFailures, type ScenarioResult, withFlow } from "./scenario.ts";

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
