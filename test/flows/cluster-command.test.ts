/**
 * The cluster command for real (`bun scripts/cluster.ts --api 2 --dispatchers 1`): a private
 * PostgreSQL and Redis, two API processes and a dispatcher, the balancer in front. Through the
 * balancer only: a GraphQL request, a webhook delivered for a mutation, a live subscription's event
 * over a relayed WebSocket, requests answered while an API process is SIGKILLed (and started again
 * by the cluster); then SIGTERM stops every process, removes the temporary data and leaves the
 * checkout as it was.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { createClient } from "graphql-ws";
import { eventually } from "../support/eventually.ts";
import { apiClient } from "../support/flow/api-client.ts";
import { childPids, collect, isRunning } from "../support/processes.ts";
import { startReceiver } from "../support/receiver.ts";

const root = join(import.meta.dir, "../..");
const launched: Bun.Subprocess[] = [];
// A test that failed half-way leaves the cluster running: its stop (PostgreSQL's included) takes seconds.
afterAll(async () => {
  for (const proc of launched) if (proc.exitCode === null) proc.kill("SIGTERM");
  await Promise.all(launched.map((proc) => proc.exited));
}, 30_000);

const gitStatus = () =>
  Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=all"], { cwd: root }).stdout.toString();

/** True when something accepts TCP connections on loopback `port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port }, () => {
      socket.end();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

/** The first capture of `pattern` in `text`. @throws when there is none. */
function capture(text: string, pattern: RegExp): string {
  const found = pattern.exec(text)?.[1];
  if (found === undefined) throw new Error(`no ${pattern} in:\n${text}`);
  return found;
}

test("the cluster command serves through its balancer, survives an API killed, and stops cleanly", async () => {
  const before = gitStatus();
  const proc = Bun.spawn(
    [process.execPath, "scripts/cluster.ts", "--api", "2", "--dispatchers", "1", "--port", "0"],
    {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: "",
        REDIS_URL: "",
        LOG_LEVEL: "warn",
        WEBHOOKS_ALLOW_HTTP: "true",
        DELIVERY_ALLOW_HTTP: "true",
        DELIVERY_ALLOW_PRIVATE_NETWORKS: "127.0.0.0/8,::1",
      },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  launched.push(proc);
  const out = collect(proc.stdout);
  const err = collect(proc.stderr);
  await eventually(() => expect(out.text()).toContain("Ctrl-C stops everything"), { timeoutMs: 60_000 });
  const text = out.text();
  const base = capture(text, /balancer\s+(http:\/\/\S+)/);
  const token = capture(text, /tenant 'default'.*\n(\S+)/);
  const tempDir = capture(text, /temporary data (\S+)/);
  const postgresPort = Number(capture(text, /PostgreSQL\s+postgres:\/\/\S+:(\d+)\//));
  const apiBases = [...text.matchAll(/api \d\s+(http:\/\/\S+)/g)].map((match) => match[1] as string);
  expect(apiBases.length).toBe(2);
  const api2Pid = Number(capture(text, /api 2\s+http:\/\/\S+\s+\(pid (\d+)\)/));
  const children = childPids(proc.pid);
  // Two API processes, a dispatcher and redis-server (PostgreSQL detaches from its starter).
  expect(children.length).toBe(4);
  expect(existsSync(tempDir)).toBe(true);

  const client = apiClient(base, token);
  const receiver = startReceiver();
  try {
    // A GraphQL request and a webhook delivery, through the balancer.
    expect((await client.graphql("{ regions { edges { node { UID } } } }")).errors).toBeUndefined();
    const hook = await client.request("POST", "/webhooks", {
      body: {
        name: "regions",
        url: `${receiver.url}/regions`,
        type: "graphql",
        query: "subscription { schemaRegions { operation data { Name } } }",
      },
    });
    expect(hook.status).toBe(201);

    // A live subscription over the balancer's relayed WebSocket.
    const live = createClient({
      url: `${base.replace("http", "ws")}/graphql/subscriptions`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { Authorization: `Bearer ${token}` },
    });
    const events: unknown[] = [];
    const acknowledged = new Promise<void>((resolve) => live.on("connected", () => resolve()));
    live.subscribe(
      { query: `subscription { schemaRegions(filter: "Name == 'Through the balancer'") { data { Name } } }` },
      { next: (value) => void events.push(value), error: () => undefined, complete: () => undefined },
    );
    await acknowledged;
    // Held once one of the API processes (whichever the balancer chose) counts it.
    const held = async () => {
      const gauges = await Promise.all(
        apiBases.map(async (api) =>
          (await (await fetch(`${api}/metrics`)).text()).match(/^live_subscriptions 1$/m),
        ),
      );
      return gauges.some((found) => found !== null);
    };
    await eventually(held);

    const inserted = await client.graphql(
      `mutation { schema { insertRegions(input: {Name: "Through the balancer", Timezone: "UTC"}) } }`,
    );
    expect(inserted.errors).toBeUndefined();
    await eventually(() => expect(receiver.requests.length).toBe(1), { timeoutMs: 15_000 });
    expect(receiver.requests[0]?.body).toContain("Through the balancer");
    await eventually(() => expect(events.length).toBe(1), { timeoutMs: 10_000 });
    expect(JSON.stringify(events[0])).toContain("Through the balancer");
    await live.dispose();

    // API 2 SIGKILLed: the balancer skips it while it is down; the cluster starts it again.
    process.kill(api2Pid, "SIGKILL");
    await eventually(() => expect(isRunning(api2Pid)).toBe(false));
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await client.request("GET", "/auth/whoami")).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    await eventually(() => expect(out.text()).toContain("api 2 ready again"), { timeoutMs: 30_000 });
  } finally {
    await receiver.stop();
  }

  const all = childPids(proc.pid);
  proc.kill("SIGTERM");
  expect(await proc.exited).toBe(0);
  expect(out.text()).toContain("Cluster stopped; temporary data removed.");
  expect(all.filter(isRunning)).toEqual([]);
  expect(children.filter(isRunning)).toEqual([]);
  expect(existsSync(tempDir)).toBe(false);
  expect(await listening(postgresPort)).toBe(false);
  expect(gitStatus()).toBe(before);
  expect(err.text()).toBe("");
}, 120_000);
