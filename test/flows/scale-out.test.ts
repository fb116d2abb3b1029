// @test-engines postgres: several API processes and dispatchers share one store, which only PostgreSQL is meant for (SPEC §10); the scenario opens its own PostgreSQL database whatever TEST_STORE says, so it runs once, in the PostgreSQL pass
/**
 * Issue 29 at test size: 3 API processes and 2 dispatchers on one PostgreSQL and one Redis, 12
 * tenants writing round robin through all API processes, each to webhooks at a receiver of its
 * own; mid-load an API process and a dispatcher are SIGKILLed and restarted, then Redis is
 * restarted. Nothing committed is lost; duplicates are counted and printed. The long version:
 * `bun bench/faults.ts scale-out`.
 */
import { expect, test } from "bun:test";
import { latencyText } from "../support/flow/delivery-check.ts";
import { scaleOut } from "../support/flow/scale-out.ts";
import { testEngine } from "../support/test-store.ts";

test.skipIf(testEngine() !== "postgres")(
  "3 APIs and 2 dispatchers: an API and a dispatcher killed, Redis restarted, nothing committed lost",
  async () => {
    const result = await scaleOut({
      apis: 3,
      dispatchers: 2,
      tenants: 12,
      durationMs: 10_000,
      ratePerSecond: 100,
      answerMs: 20,
      outageMs: 1000,
    });
    const { figures, writes } = result;
    console.log(
      `scale-out: ${writes.acked} mutations acknowledged (answers lost: ${writes.lostAnswersCommitted} found committed, ${writes.lostAnswersNotCommitted} not), ${figures.expected} deliveries expected, ${figures.delivered} delivered, ${figures.lost} lost, ${figures.duplicates} duplicates; commit → receipt ${latencyText(figures.latency)}; ${Object.entries(
        result.extra,
      )
        .map(([k, v]) => `${k}: ${v}`)
        .join("; ")}`,
    );
    expect(result.failures).toEqual([]);
    expect(figures.lost).toBe(0);
    expect(figures.delivered).toBe(figures.expected);
    expect(figures.expected).toBeGreaterThan(500);
  },
  120_000,
);
