import { describe, expect, test } from "bun:test";
import { loadApiConfig } from "../../api/config.ts";
import { ConfigError } from "../../common/errors.ts";
import { loadDispatcherConfig } from "../../dispatcher/config.ts";

describe("configuration", () => {
  test("applies the documented defaults and freezes the result", () => {
    const config = loadApiConfig({ REDIS_URL: "redis://127.0.0.1:6379" });
    expect(config).toMatchObject({
      PORT: 3000,
      HOST: "127.0.0.1",
      DATA_DIR: "./data",
      REDIS_PREFIX: "tds",
      LOG_LEVEL: "info",
      MAX_BODY_BYTES: 1_048_576,
      DELIVERY_LOG_RETENTION_DAYS: 30,
      CHANGE_LOG_RETENTION_HOURS: 24,
      RETENTION_SWEEP_MS: 600_000,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  test("reports every problem at once", () => {
    try {
      loadApiConfig({ PORT: "seventy", JWT_SECRET: "short", LOG_LEVEL: "loud" });
      throw new Error("expected a ConfigError");
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems.map((p) => p.split(":")[0]).sort();
      expect(problems).toEqual(["JWT_SECRET", "LOG_LEVEL", "PORT", "REDIS_URL"]);
    }
  });

  test("retention must be a whole, positive number of days or hours", () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadApiConfig({ REDIS_URL: "redis://x:1", ...env });
        return [];
      } catch (error) {
        return (error as ConfigError).problems.map((p) => p.split(":")[0]);
      }
    };
    expect(problems({ DELIVERY_LOG_RETENTION_DAYS: "0", CHANGE_LOG_RETENTION_HOURS: "1.5" })).toEqual([
      "DELIVERY_LOG_RETENTION_DAYS",
      "CHANGE_LOG_RETENTION_HOURS",
    ]);
    expect(problems({ DELIVERY_LOG_RETENTION_DAYS: "365", CHANGE_LOG_RETENTION_HOURS: "1" })).toEqual([]);
  });

  test("FEED_PARTITIONS: unset (the store's own), or a whole number from 1 to 256", () => {
    const load = (value?: string) => loadApiConfig({ REDIS_URL: "redis://x:1", FEED_PARTITIONS: value });
    expect(load().FEED_PARTITIONS).toBeUndefined();
    expect(load("").FEED_PARTITIONS).toBeUndefined();
    expect(load("1").FEED_PARTITIONS).toBe(1);
    expect(load("256").FEED_PARTITIONS).toBe(256);
    for (const bad of ["0", "257", "2.5", "-4", "many"]) {
      const error = (() => {
        try {
          load(bad);
          return null;
        } catch (caught) {
          return caught as ConfigError;
        }
      })();
      expect(error).toBeInstanceOf(ConfigError);
      expect(error?.problems.map((p) => p.split(":")[0])).toEqual(["FEED_PARTITIONS"]);
    }
  });

  test("empty values fall back to defaults", () => {
    expect(
      loadDispatcherConfig({ REDIS_URL: "redis://x:1", DISPATCH_CONCURRENCY: "" }).DISPATCH_CONCURRENCY,
    ).toBe(32);
  });
});
