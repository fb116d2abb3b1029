/**
 * Starting a process on MongoDB: MONGODB_URL alone stops the API, the dispatcher and the admin
 * tool at start with one line saying the engine is experimental, naming the opt-in
 * (STORE_EXPERIMENTAL=mongodb) and the README section; opted in, a server that cannot be reached
 * stops them with one line naming MONGODB_URL. Never a driver's stack trace, never a process left
 * waiting. (No MongoDB server can run here: the opted-in case points at a loopback port nothing
 * listens on.)
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { MONGODB_EXPERIMENTAL_REFUSAL } from "../../../common/store/store-location.ts";
import { freePort } from "../../../scripts/private-redis.ts";

const ROOT = join(import.meta.dir, "../../..");

const ENTRIES: Record<string, string[]> = {
  api: ["api/main.ts"],
  dispatcher: ["dispatcher/main.ts"],
  admin: ["api/admin/cli.ts", "list-tenants"],
};

async function start(entry: string[], settings: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, ...entry], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: "/nonexistent-tds-data",
      REDIS_URL: process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:1",
      JWT_SECRET: "start-refusals-secret-start-refusals-0123456789",
      SECRETS_KEY: "start-refusals-key-start-refusals-key-0123456789",
      DISPATCHER_PORT: "0",
      PORT: String(freePort()),
      LOG_LEVEL: "silent",
      ...settings,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const started = performance.now();
  const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { stderr, code, killed: proc.signalCode !== null, ms: performance.now() - started };
}

const unreachable = `mongodb://127.0.0.1:${freePort()}/tds?serverSelectionTimeoutMS=300`;
const CASES: [string, Record<string, string>, string][] = [
  [
    "MONGODB_URL alone: refused, the engine being experimental",
    { MONGODB_URL: "mongodb://db.example:27017/tds?replicaSet=rs0" },
    MONGODB_EXPERIMENTAL_REFUSAL,
  ],
  [
    "opted in, no server at the URL: refused, naming MONGODB_URL",
    { MONGODB_URL: unreachable, STORE_EXPERIMENTAL: "mongodb" },
    `MONGODB_URL: cannot use ${unreachable}: connect ECONNREFUSED`,
  ],
];

describe("MongoDB at start: one line, no stack, no wait", () => {
  for (const [name, entry] of Object.entries(ENTRIES))
    for (const [what, settings, said] of CASES)
      test(`${name}: ${what}`, async () => {
        const { stderr, code, killed, ms } = await start(entry, settings);
        expect(killed).toBe(false);
        expect(code).not.toBe(0);
        expect(stderr).toContain(said);
        // The error's lines, no stack: the heading and the one problem.
        expect(stderr.trim().split("\n").length).toBeLessThanOrEqual(2);
        expect(stderr).not.toContain("    at ");
        expect(ms).toBeLessThan(10_000);
      }, 20_000);
});
