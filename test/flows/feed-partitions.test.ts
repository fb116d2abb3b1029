/**
 * The change feed's partitions over three real API processes on one store and
 * one Redis (with a dispatcher and a counting receiver): the partitions spread
 * (every process reads some where there are enough, none is held twice, each
 * process's `/metrics` says what Redis's lease keys say), a SIGKILLed process's
 * partitions are read again by the others within the lease's life, and every
 * mutation sent round-robin through the processes, before, during and after,
 * reaches its webhook. A process started with another FEED_PARTITIONS than the
 * store has is refused in one line naming both. Runs on both engines (SQLite
 * has one partition: one process reads it, and it moves all the same).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Redis from "ioredis";
import { shareOf } from "../../api/feed/partition-assignment.ts";
import { redisKeys } from "../../common/redis-keys.ts";
import { eventually } from "../support/eventually.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type RunningService, type ServiceProcess, startService } from "../support/service-processes.ts";
import { testEngine } from "../support/test-store.ts";

const LEASE_MS = 3000;
const keys = redisKeys("tds");

let service: RunningService;
let receiver: Receiver;
let redis: Redis;
/** The API processes and their addresses; the first is the service's own. */
const apis: { base: string; api: ServiceProcess }[] = [];
/** Tenants and their administrator tokens (created through the admin tool, spread over partitions). */
const tenants: { name: string; token: string }[] = [];

beforeAll(async () => {
  service = await startService({ apiEnv: { FEED_LEASE_MS: String(LEASE_MS), FEED_POLL_MS: "100" } });
  redis = new Redis(service.redis.url, { maxRetriesPerRequest: 1 });
  receiver = startReceiver();
  apis.push({ base: service.base, api: service.api });
  apis.push(await service.startApi(), await service.startApi());
  const created = await Promise.all(
    Array.from({ length: 6 }, (_, i) => service.admin(["create-tenant", `spread-${i}`])),
  );
  for (const [i, output] of created.entries()) {
    const token = /administrator token:\n(\S+)/.exec(output)?.[1];
    if (!token) throw new Error(`no token in: ${output}`);
    tenants.push({ name: `spread-${i}`, token });
  }
  tenants.push({ name: "default", token: service.token });
  for (const tenant of tenants) {
    const answer = await fetch(`${service.base}/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        name: "regions",
        url: `${receiver.url}/${tenant.name}`,
        type: "graphql",
        query: "subscription { schemaRegions { operation data { Name } } }",
      }),
    });
    expect(answer.status).toBe(201);
  }
}, 120_000);
afterAll(async () => {
  redis?.disconnect();
  await receiver?.stop();
  await service?.stop();
});

/** The pid in a lease's value (`<host>:<pid>:<random>`). */
const pidOf = (holder: string | null) => (holder === null ? null : Number(holder.split(":")[1]));

/** Each partition's holder's pid, as Redis's lease keys say. */
async function holderPids(partitions: number): Promise<(number | null)[]> {
  const holders = await redis.mget(...Array.from({ length: partitions }, (_, p) => keys.feedLease(p)));
  return holders.map(pidOf);
}

/** The partitions a process says it reads (`change_feed_partition_held`), and how many there are. */
async function heldPerMetrics(base: string): Promise<{ held: number[]; partitions: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const lines = [...text.matchAll(/^change_feed_partition_held\{partition="(\d+)"\} (\d)$/gm)];
  return {
    held: lines.filter((line) => line[2] === "1").map((line) => Number(line[1])),
    partitions: lines.length,
  };
}

/** Waits until the live processes hold every partition between them, as Redis and their metrics agree. */
async function spreadOver(
  live: { base: string; api: ServiceProcess }[],
  partitions: number,
  timeoutMs: number,
) {
  const pids = live.map((process) => process.api.pid());
  return eventually(
    async () => {
      const holders = await holderPids(partitions);
      for (const pid of holders) expect(pids).toContain(pid as number);
      const share = shareOf(partitions, live.length);
      for (const [i, process] of live.entries()) {
        const mine = holders.flatMap((pid, p) => (pid === pids[i] ? [p] : []));
        expect(mine.length).toBeLessThanOrEqual(share);
        if (partitions >= live.length) expect(mine.length).toBeGreaterThan(0);
        expect((await heldPerMetrics(process.base)).held).toEqual(mine);
      }
      return holders;
    },
    { timeoutMs, intervalMs: 50 },
  );
}

let sent = 0;
/** One insert per tenant, round-robin over `through`; returns the names written. */
async function writeRound(through: { base: string }[], label: string): Promise<string[]> {
  const names: string[] = [];
  for (const tenant of tenants) {
    const name = `${label}-${tenant.name}-${sent}`;
    const base = (through[sent++ % through.length] as { base: string }).base;
    const answer = await fetch(`${base}/graphql/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        query: `mutation { schema { insertRegions(input: {Name: "${name}", Timezone: "UTC"}) } }`,
      }),
    });
    const body = (await answer.json()) as { errors?: unknown };
    expect(body.errors).toBeUndefined();
    names.push(name);
  }
  return names;
}

/** Names received (each element of each delivery), with how many times each came. */
function received(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of receiver.requests) {
    const elements = JSON.parse(request.body) as { data: { schemaRegions: { data: { Name: string } } } }[];
    for (const element of elements) {
      const name = element.data.schemaRegions.data.Name;
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
  }
  return counts;
}

describe("the change feed over three API processes", () => {
  let partitions = 0;

  test("the partitions spread: each process reads some, none is held twice, metrics and leases agree", async () => {
    partitions = (await heldPerMetrics(service.base)).partitions;
    expect(partitions).toBe(testEngine() === "postgres" ? 16 : 1);
    await spreadOver(apis, partitions, 15_000);
    const names = await writeRound(apis, "spread");
    await eventually(() => expect(names.filter((name) => !received().has(name))).toEqual([]), {
      timeoutMs: 15_000,
    });
  }, 60_000);

  test("a SIGKILLed process's partitions are read again by the others within the lease; nothing is lost", async () => {
    const holders = await holderPids(partitions);
    // The process holding the most partitions dies (on SQLite: the one reading the only one).
    const victim = apis.reduce((most, process) =>
      holders.filter((pid) => pid === process.api.pid()).length >
      holders.filter((pid) => pid === most.api.pid()).length
        ? process
        : most,
    );
    const survivors = apis.filter((process) => process !== victim);
    const before = await writeRound(apis, "before");
    await victim.api.kill();
    const killedAt = Date.now();
    const during = await writeRound(survivors, "during");
    await spreadOver(survivors, partitions, LEASE_MS + 5000);
    const movedMs = Date.now() - killedAt;
    // Within the lease's life plus the assignment's rounds (a fifth of it each), with room for a busy machine.
    expect(movedMs).toBeLessThan(LEASE_MS + 2000);
    const after = await writeRound(survivors, "after");
    const expected = [...before, ...during, ...after];
    await eventually(() => expect(expected.filter((name) => !received().has(name))).toEqual([]), {
      timeoutMs: 20_000,
    });
    const duplicates = expected.filter((name) => (received().get(name) ?? 0) > 1).length;
    console.log(
      `feed partitions: ${partitions} moved off the killed process in ${movedMs} ms (lease ${LEASE_MS} ms); ${expected.length} mutations delivered, ${duplicates} more than once`,
    );
  }, 90_000);

  test("a process started with another FEED_PARTITIONS than the store's is refused, in one line naming both", async () => {
    const other = testEngine() === "postgres" ? "8" : "4";
    const refusal = await service.startApi({ FEED_PARTITIONS: other }).then(
      () => null,
      (error: Error) => error.message,
    );
    expect(refusal).not.toBeNull();
    const said =
      testEngine() === "postgres"
        ? "FEED_PARTITIONS: this store's change feed was created with 16 partitions, FEED_PARTITIONS=8 cannot change that; set it to 16 or unset it"
        : "FEED_PARTITIONS: the embedded SQLite store keeps one change-feed partition (one machine), not 4; unset it or set 1";
    expect(refusal).toContain(said);
    expect(refusal).not.toContain("    at ");
  }, 30_000);
});
