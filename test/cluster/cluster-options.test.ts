/**
 * The cluster command's pure parts: its options (arguments and environment, every problem at once)
 * and when a process that died is started again.
 */
import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../common/errors.ts";
import { parseClusterOptions } from "../../scripts/cluster-options.ts";
import { shouldRestart } from "../../scripts/cluster-process.ts";

describe("cluster options", () => {
  test("defaults: 3 API processes, 2 dispatchers, the balancer on 3000, private servers", () => {
    expect(parseClusterOptions([], {})).toEqual({
      "--api": 3,
      "--dispatchers": 2,
      "--port": 3000,
      HOST: "127.0.0.1",
      DATABASE_URL: undefined,
      REDIS_URL: undefined,
      JWT_SECRET: undefined,
      SECRETS_KEY: undefined,
    });
  });

  test("arguments and servers given", () => {
    const options = parseClusterOptions(["--api", "5", "--dispatchers=1", "--port", "0"], {
      DATABASE_URL: "postgres://u@db:5432/tds",
      REDIS_URL: "redis://cache:6379",
    });
    expect(options["--api"]).toBe(5);
    expect(options["--dispatchers"]).toBe(1);
    expect(options["--port"]).toBe(0);
    expect(options.DATABASE_URL).toBe("postgres://u@db:5432/tds");
    expect(options.REDIS_URL).toBe("redis://cache:6379");
  });

  const problems = (argv: string[], env: Record<string, string> = {}) => {
    try {
      parseClusterOptions(argv, env);
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
    return [];
  };

  test.each([
    [["--api", "0"], {}, ["--api:"]],
    [["--api", "17", "--dispatchers", "x"], {}, ["--api:", "--dispatchers:"]],
    [["--port", "70000"], { DATABASE_URL: "mysql://x" }, ["--port:", "DATABASE_URL:"]],
    [["--apis", "2"], {}, ["Unknown option '--apis'"]],
    [["3"], {}, ["Unexpected argument '3'"]],
  ])("%j with %j is refused, naming each problem", (argv, env, starts) => {
    const found = problems(argv, env as Record<string, string>);
    expect(found.length).toBe(starts.length);
    starts.forEach((start, i) => {
      expect(found[i]).toContain(start);
    });
  });
});

describe("restarting a process that died", () => {
  const run = (startedAt: number, lived: number) => ({ startedAt, exitedAt: startedAt + lived });
  test.each([
    ["a first death", [run(0, 60_000)], true],
    ["two early exits", [run(0, 500), run(2000, 500)], true],
    ["three early exits in a row", [run(0, 500), run(2000, 500), run(4000, 500)], false],
    ["three deaths, one after a long run", [run(0, 500), run(2000, 60_000), run(70_000, 500)], true],
    [
      "a long run after three early exits",
      [run(0, 500), run(2000, 500), run(4000, 500), run(6000, 60_000)],
      true,
    ],
  ])("%s: %j → %p", (_label, runs, expected) => {
    expect(shouldRestart(runs)).toBe(expected);
  });
});
