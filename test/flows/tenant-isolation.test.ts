/**
 * Scenario 7: tenant B's administrator against tenant A's ids and names on
 * every endpoint and every GraphQL operation gets nothing of A's, changes
 * nothing of A's, and B's writes never reach A's webhook.
 */
import { expect, test } from "bun:test";
import { isolation } from "../support/flow/isolation.ts";

test("tenant isolation: B gets nothing of A's, anywhere", async () => {
  const result = await isolation();
  expect(result.failures).toEqual([]);
  expect(result.extra["calls made as tenant B"]).toBeGreaterThan(70);
}, 60_000);
