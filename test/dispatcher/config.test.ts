import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../common/errors.ts";
import { loadDispatcherConfig, parseDurationList } from "../../dispatcher/config.ts";
import { DEFAULT_RETRY_SCHEDULE_MS } from "../../dispatcher/decide-outcome.ts";

const base = { REDIS_URL: "redis://127.0.0.1:6379" };

const problemsOf = (env: Record<string, string>) => {
  try {
    loadDispatcherConfig({ ...base, ...env });
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.problems;
  }
};

describe("dispatcher config", () => {
  test("defaults: the SPEC schedule, 25 s timeout, nothing private, no plain http", () => {
    const config = loadDispatcherConfig(base);
    expect(config.DELIVERY_RETRY_SCHEDULE).toEqual([...DEFAULT_RETRY_SCHEDULE_MS]);
    expect(config.DELIVERY_TIMEOUT_MS).toBe(25_000);
    expect(config.DELIVERY_RETRY_AFTER_MAX_MS).toBe(3_600_000);
    expect(config.DELIVERY_ENDPOINT_CONCURRENCY).toBe(8);
    expect(config.DELIVERY_ENDPOINT_BUSY_DELAY_MS).toBe(1000);
    expect(config.DELIVERY_ALLOW_PRIVATE_NETWORKS).toEqual([]);
    expect(config.DELIVERY_ALLOW_HTTP).toBe(false);
    expect(config.DISPATCH_LOCK_MS).toBe(30_000);
    expect(config.DISPATCH_SLOW_CONCURRENCY).toBe(64);
  });

  test("DISPATCH_SLOW_CONCURRENCY may be 0 (slow attempts keep their slots), not negative", () => {
    const config = loadDispatcherConfig({ ...base, DISPATCH_SLOW_CONCURRENCY: "0" });
    expect(config.DISPATCH_SLOW_CONCURRENCY).toBe(0);
    expect(problemsOf({ DISPATCH_SLOW_CONCURRENCY: "-1" })).toEqual([
      "DISPATCH_SLOW_CONCURRENCY: Too small: expected number to be >=0",
    ]);
  });

  test("overrides are parsed", () => {
    const config = loadDispatcherConfig({
      ...base,
      DELIVERY_RETRY_SCHEDULE: "250ms, 1s,2m,1h",
      DELIVERY_ALLOW_PRIVATE_NETWORKS: "127.0.0.0/8,::1",
      DELIVERY_ALLOW_HTTP: "true",
    });
    expect(config.DELIVERY_RETRY_SCHEDULE).toEqual([250, 1000, 120_000, 3_600_000]);
    expect(config.DELIVERY_ALLOW_PRIVATE_NETWORKS).toHaveLength(2);
    expect(config.DELIVERY_ALLOW_HTTP).toBe(true);
  });

  test("every problem is reported at once", () => {
    expect(
      problemsOf({
        DELIVERY_RETRY_SCHEDULE: "5s,soon,0s",
        DELIVERY_ALLOW_PRIVATE_NETWORKS: "localhost",
        DELIVERY_ALLOW_HTTP: "yes",
        DELIVERY_TIMEOUT_MS: "0",
      }),
    ).toEqual([
      "DELIVERY_TIMEOUT_MS: Too small: expected number to be >0",
      "DELIVERY_RETRY_SCHEDULE: not a positive duration like 5s, 30m or 250ms: soon, 0s",
      "DELIVERY_ALLOW_PRIVATE_NETWORKS: not an IP address or CIDR range: localhost",
      "DELIVERY_ALLOW_HTTP: must be true or false",
    ]);
  });

  test.each([
    ["5s", [5000]],
    ["1h,30m", [3_600_000, 1_800_000]],
  ] as [string, number[]][])("parseDurationList(%p)", (text, expected) => {
    expect(parseDurationList(text)).toEqual(expected);
  });
});
