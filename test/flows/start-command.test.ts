/**
 * The start command for real: private Redis, API and dispatcher as separate
 * processes, a token printed on first start, real HTTP over loopback, and a
 * clean stop that leaves nothing running.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../scripts/private-redis.ts";
import { eventually } from "../support/eventually.ts";
import { childPids, collect, isRunning } from "../support/processes.ts";

const root = join(import.meta.dir, "../..");
const dataDir = mkdtempSync(join(tmpdir(), "tds-start-"));
const port = freePort();
const env = {
  ...process.env,
  DATA_DIR: dataDir,
  PORT: String(port),
  DISPATCHER_PORT: String(freePort()),
  LOG_LEVEL: "warn",
  REDIS_URL: "",
};
const launched: Bun.Subprocess[] = [];
afterAll(async () => {
  for (const proc of launched) proc.kill("SIGTERM");
  await Promise.all(launched.map((proc) => proc.exited));
  rmSync(dataDir, { recursive: true, force: true });
});

/** Starts the command; `ownGroup`: as a terminal's foreground job, in a process group of its own. */
function launch(ownGroup = false) {
  const proc = Bun.spawn([process.execPath, "scripts/start.ts"], {
    cwd: root,
    env,
    stdout: "pipe",
    stderr: "pipe",
    detached: ownGroup,
  });
  launched.push(proc);
  return { proc, out: collect(proc.stdout), err: collect(proc.stderr) };
}

describe("start command", () => {
  test("first start prints the URL and an admin token, serves real HTTP, and stops cleanly", async () => {
    const { proc, out } = await launchAndWait();
    const token = /tenant 'default'.*\n(\S+)/.exec(out.text())?.[1];
    expect(token).toBeDefined();
    expect(out.text()).toContain(`API listening on http://127.0.0.1:${port}`);

    const base = `http://127.0.0.1:${port}`;
    const whoami = await fetch(`${base}/auth/whoami`, { headers: { authorization: `Bearer ${token}` } });
    expect(whoami.status).toBe(200);
    expect(((await whoami.json()) as { result: { username: string } }).result.username).toBe("admin");
    expect(await (await fetch(`${base}/health`)).json()).toEqual({ status: "ok", store: "ok", redis: "ok" });

    const huge = await fetch(`${base}/auth/token`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ description: "x".repeat(2 * 1024 * 1024) }),
    });
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as { errorType: string }).errorType).toBe("payload_too_large");

    const children = childPids(proc.pid);
    expect(children.length).toBe(3);
    await stop(proc, children);
  }, 30_000);

  test("a second API on the port in use fails with a clear message", async () => {
    const { proc } = await launchAndWait();
    const children = childPids(proc.pid);
    const redisUrl = /Private Redis on (\S+)/.exec(launchOutput)?.[1] ?? "";
    const second = Bun.spawn([process.execPath, "api/main.ts"], {
      cwd: root,
      env: { ...env, REDIS_URL: redisUrl },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await second.exited).toBe(1);
    expect(await new Response(second.stderr).text()).toContain(`127.0.0.1:${port} is already in use`);
    await stop(proc, children);
  }, 30_000);

  test("Ctrl-C (SIGINT to the whole process group) stops the services before their Redis, without errors", async () => {
    const { proc, err } = await launchAndWait(true);
    const children = childPids(proc.pid);
    expect(children.length).toBe(3);
    const redis = children.find((pid) =>
      readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("redis-server"),
    );
    const services = children.filter((pid) => pid !== redis);
    expect(redis).toBeDefined();
    // Out of the foreground group's reach: Redis waits for the start command to stop it last.
    expect(sessionOf(redis as number)).not.toBe(sessionOf(proc.pid));
    // What a terminal does on Ctrl-C: the signal goes to every process of the foreground group.
    process.kill(-proc.pid, "SIGINT");
    let redisGoneFirst = false;
    while (services.some(isRunning)) {
      if (!isRunning(redis as number)) redisGoneFirst = true;
      await Bun.sleep(1);
    }
    expect(redisGoneFirst).toBe(false);
    expect(await proc.exited).toBe(0);
    await eventually(() => expect(children.filter(isRunning)).toEqual([]), { timeoutMs: 5000 });
    // Redis stopping first left the services' connections failing as they shut down.
    expect(err.text()).not.toContain("ECONNREFUSED");
    expect(err.text()).not.toContain("Unhandled error event");
  }, 30_000);

  test("a restart on the same data prints no new token, only how to mint one", () => {
    expect(launchOutput).not.toContain("Administrator token");
    expect(launchOutput).toContain("npm run admin -- mint-token --tenant default --user admin");
  });
});

let launchOutput = "";
async function launchAndWait(ownGroup = false) {
  const launched = launch(ownGroup);
  await eventually(() => expect(launched.out.text()).toContain("Dispatcher consuming deliveries"), {
    timeoutMs: 15_000,
  });
  await eventually(() => expect(launched.out.text()).toContain("API listening on"), { timeoutMs: 15_000 });
  launchOutput = launched.out.text();
  return launched;
}

async function stop(proc: Bun.Subprocess, children: number[]) {
  proc.kill("SIGTERM");
  expect(await proc.exited).toBe(0);
  await eventually(() => expect(children.filter(isRunning)).toEqual([]), { timeoutMs: 5000 });
}

/** The session a process belongs to (/proc/<pid>/stat's sixth field, after the command's parenthesis). */
function sessionOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
}
