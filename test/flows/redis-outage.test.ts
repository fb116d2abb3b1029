/**
 * Scenario 4 at test size: Redis stopped during writes (they keep succeeding)
 * and started again; then queued jobs survive Redis being killed and
 * restarted from its append-only file. The long version: `bun bench/faults.ts redis`.
 */
import { expect, test } from "bun:test";
import { redisOutage } from "../support/flow/redis-outage.ts";

test("Redis outage: writes succeed, everything is delivered; queued jobs survive a Redis restart", async () => {
  const result = await redisOutage({ durationMs: 3000, outageMs: 1200, queued: 60 });
  expect(result.failures).toEqual([]);
  expect(result.figures.delivered).toBe(result.figures.expected);
}, 90_000);
