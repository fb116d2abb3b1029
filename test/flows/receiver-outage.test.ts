/**
 * Scenario 5 at test size: the receiver refuses connections, then comes back
 * within the retry window; everything is delivered and the delivery log shows
 * the failed attempts before the success. The long version: `bun bench/faults.ts receiver`.
 */
import { expect, test } from "bun:test";
import { receiverOutage } from "../support/flow/receiver-outage.ts";

test("receiver down, then up within the retry window: everything delivered, attempts logged", async () => {
  const result = await receiverOutage({ mutations: 60, downMs: 1200 });
  expect(result.failures).toEqual([]);
  expect(result.extra["deliveries retried"]).toBeGreaterThan(0);
}, 60_000);
