/**
 * A PostgreSQL the processes cannot use stops each of them at start with the
 * configuration error's lines naming DATABASE_URL: never a driver's stack
 * trace, never a process left waiting. The API, the dispatcher and the admin
 * tool open the store through one factory (common/store/open-engine.ts).
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { OLDEST_SUPPORTED_MAJOR } from "../../../common/store/postgres/postgres-engine.ts";
import { freePort } from "../../../scripts/private-redis.ts";

const ROOT = join(import.meta.dir, "../../..");

const ENTRIES: Record<string, string[]> = {
  api: ["api/main.ts"],
  dispatcher: ["dispatcher/main.ts"],
  admin: ["api/admin/cli.ts", "list-tenants"],
};

async function start(entry: string[], databaseUrl: string) {
  const proc = Bun.spawn([process.execPath, ...entry], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: "/nonexistent-tds-data",
      DATABASE_URL: databaseUrl,
      REDIS_URL: process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:1",
      JWT_SECRET: "start-failures-secret-start-failures-0123456789",
      SECRETS_KEY: "start-failures-key-start-failures-key-0123456789",
      DISPATCHER_PORT: "0",
      PORT: String(freePort()),
      LOG_LEVEL: "silent",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { stderr, code, killed: proc.signalCode !== null };
}

const CASES: [string, string, RegExp][] = [
  ["a URL of another scheme", "mysql://127.0.0.1/tds", /DATABASE_URL: .*postgres:\/\//],
  [
    "a server that is not there",
    `postgres://tds@127.0.0.1:${freePort()}/tds`,
    /DATABASE_URL: cannot use postgres:\/\/tds@127\.0\.0\.1/,
  ],
];

describe("a DATABASE_URL the processes cannot use stops them at start, in a line naming it", () => {
  for (const [name, entry] of Object.entries(ENTRIES))
    for (const [what, url, said] of CASES)
      test(`${name}: ${what}`, async () => {
        const { stderr, code, killed } = await start(entry, url);
        expect(killed).toBe(false);
        expect(code).not.toBe(0);
        expect(stderr).toMatch(said);
        // The error's lines, no stack: at most the heading and the one problem.
        expect(stderr.trim().split("\n").length).toBeLessThanOrEqual(2);
        expect(stderr).not.toContain("    at ");
      }, 20_000);
});

test("the oldest supported server is a version the project still supports", () => {
  expect(OLDEST_SUPPORTED_MAJOR).toBe(14);
});
