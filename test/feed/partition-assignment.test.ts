/**
 * The spread of the change log's partitions over the live API processes (partition-assignment.ts):
 * tables of one round's moves, then a simulated cluster (leases and heartbeats with Redis's
 * semantics, on a clock of its own) in which processes join, die and leave while rounds run in a
 * random order: never two readers of a partition, every partition read and no process above its
 * share once the live set is steady, a dead process's partitions read again within the lease's
 * life plus a round.
 */
import { describe, expect, test } from "bun:test";
import { type AssignmentView, planAssignment, shareOf } from "../../api/feed/partition-assignment.ts";

const free = (partitions: number) => Array.from({ length: partitions }, () => null);
const heldBy = (partitions: number, owner: string) => Array.from({ length: partitions }, () => owner);

describe("the share", () => {
  test.each([
    [16, 1, 16],
    [16, 2, 8],
    [16, 3, 6],
    [16, 16, 1],
    [16, 40, 1],
    [1, 3, 1],
    [7, 0, 7],
  ])("%i partitions over %i processes: at most %i each", (partitions, members, share) => {
    expect(shareOf(partitions, members)).toBe(share);
  });
});

describe("one round's moves", () => {
  const view = (over: Partial<AssignmentView>): AssignmentView => ({
    partitions: 16,
    members: ["a"],
    self: "a",
    holders: free(16),
    ...over,
  });

  test("alone: takes every free partition", () => {
    const moves = planAssignment(view({}));
    expect(moves.release).toEqual([]);
    expect(moves.take.toSorted((x, y) => x - y)).toEqual([...Array(16).keys()]);
  });

  test("listed or not, a process counts itself: alone in an empty list it takes all", () => {
    expect(planAssignment(view({ members: [] })).take).toHaveLength(16);
  });

  test("a second process joins: the holder of all gives up the excess, the newcomer finds none free yet", () => {
    const holders = heldBy(16, "a");
    const a = planAssignment(view({ members: ["a", "b"], holders }));
    expect(a.take).toEqual([]);
    expect(a.release).toHaveLength(8);
    const b = planAssignment(view({ members: ["a", "b"], self: "b", holders }));
    expect(b).toEqual({ take: [], release: [] });
  });

  test("the newcomer takes what was given up, up to its share", () => {
    const holders: (string | null)[] = heldBy(16, "a");
    for (const p of planAssignment(view({ members: ["a", "b"], holders })).release) holders[p] = null;
    const b = planAssignment(view({ members: ["a", "b"], self: "b", holders }));
    expect(b.take).toHaveLength(8);
    for (const p of b.take) expect(holders[p]).toBeNull();
  });

  test("at its share, a process neither takes nor gives up, even with partitions free", () => {
    const holders: (string | null)[] = free(16);
    for (let p = 0; p < 6; p++) holders[p] = "a";
    expect(planAssignment(view({ members: ["a", "b", "c"], holders }))).toEqual({ take: [], release: [] });
  });

  test("a lease held by a process whose heartbeat lapsed is not free: it is waited out, not taken", () => {
    const holders: (string | null)[] = heldBy(16, "dead");
    holders[3] = null;
    expect(planAssignment(view({ holders })).take).toEqual([3]);
  });

  test("what it gives up is what it prefers least: it keeps the share it would take first", () => {
    const members = ["a", "b", "c", "d"];
    const first = planAssignment(view({ members })).take;
    expect(first).toHaveLength(4);
    const released = planAssignment(view({ members, holders: heldBy(16, "a") })).release;
    expect(released).toHaveLength(12);
    expect([...released, ...first].toSorted((x, y) => x - y)).toEqual([...Array(16).keys()]);
  });

  test("processes starting together prefer different partitions: their first picks mostly differ", () => {
    const members = ["host-1:100:aa", "host-2:200:bb", "host-3:300:cc"];
    const picks = members.map((self) => planAssignment(view({ members, self })).take);
    const union = new Set(picks.flat());
    expect(picks.every((take) => take.length === 6)).toBe(true);
    // 18 picks over 16 partitions: rendezvous ranks make them cover most of them at the first round.
    expect(union.size).toBeGreaterThanOrEqual(12);
  });
});

/**
 * A cluster on a simulated clock: Redis (leases with an expiry, heartbeats in a set) and processes
 * running the round partitioned-feed.ts runs, each Redis command taking a random delay, so a
 * process's view is stale by the time it acts, as on a real network.
 */
function simulatedCluster(partitions: number, seed: number) {
  const LEASE = 5000;
  const BEAT = LEASE / 2;
  const ROUND = 1000;
  let now = 0;
  let state = seed;
  const random = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const latency = () => Math.floor(random() * 150);
  const leases = new Map<number, { owner: string; until: number }>();
  const beats = new Map<string, number>();
  const holderOf = (p: number) => {
    const lease = leases.get(p);
    return lease && lease.until > now ? lease.owner : null;
  };

  interface Process {
    name: string;
    alive: boolean;
    nextRound: number;
    /** Local belief per partition: held until (its own clock = the simulation's). */
    heldUntil: Map<number, number>;
  }
  const processes: Process[] = [];

  /** One round of `p`, its Redis commands each seeing the clock a little later. */
  function round(proc: Process): void {
    const sent = now;
    // Heartbeat, and the live set as Redis answers it.
    now += latency();
    beats.set(proc.name, now + BEAT);
    const members = [...beats].filter(([, until]) => until > now).map(([name]) => name);
    now += latency();
    const holders = Array.from({ length: partitions }, (_, p) => holderOf(p));
    // Renew what Redis says is ours once a third of it is gone (feed-lease.ts), all at once: the lease
    // lives LEASE from when Redis runs the renewal, the holder counts LEASE from before it sent it.
    const renewing: number[] = [];
    for (let p = 0; p < partitions; p++) {
      if (holders[p] !== proc.name) proc.heldUntil.delete(p);
      else if ((proc.heldUntil.get(p) ?? 0) - now <= (LEASE * 2) / 3) renewing.push(p);
    }
    let start = now;
    now += latency();
    for (const p of renewing) {
      if (holderOf(p) === proc.name) {
        leases.set(p, { owner: proc.name, until: now + LEASE });
        proc.heldUntil.set(p, start + LEASE);
      } else proc.heldUntil.delete(p);
    }
    const moves = planAssignment({ partitions, members, self: proc.name, holders });
    for (const p of moves.release) proc.heldUntil.delete(p);
    now += latency();
    for (const p of moves.release) if (holderOf(p) === proc.name) leases.delete(p);
    start = now;
    now += latency();
    for (const p of moves.take) {
      if (holderOf(p) === null) {
        leases.set(p, { owner: proc.name, until: now + LEASE });
        proc.heldUntil.set(p, start + LEASE);
      }
    }
    proc.nextRound = sent + ROUND;
  }

  /** The processes that believe they hold `p` now (a reader reads only then). */
  const readersOf = (p: number) =>
    processes.filter((proc) => proc.alive && (proc.heldUntil.get(p) ?? 0) > now).map((proc) => proc.name);

  return {
    LEASE,
    ROUND,
    now: () => now,
    join(name: string) {
      processes.push({ name, alive: true, nextRound: now, heldUntil: new Map() });
    },
    /** SIGKILL: it stops at once, its leases and heartbeat left to lapse. */
    kill(name: string) {
      const proc = processes.find((p) => p.name === name);
      if (proc) proc.alive = false;
    },
    /** Runs rounds for `ms`, checking after every command batch that no partition has two readers. */
    run(ms: number) {
      const end = now + ms;
      while (now < end) {
        const due = processes.filter((proc) => proc.alive && proc.nextRound <= now);
        if (due.length === 0) {
          now += 10;
          continue;
        }
        due.sort(() => random() - 0.5);
        for (const proc of due) {
          round(proc);
          for (let p = 0; p < partitions; p++) expect(readersOf(p).length).toBeLessThanOrEqual(1);
        }
      }
    },
    /** Each partition's reader (null: none), as the processes believe. */
    readers: () => Array.from({ length: partitions }, (_, p) => readersOf(p)[0] ?? null),
    alive: () => processes.filter((proc) => proc.alive).map((proc) => proc.name),
  };
}

describe("a simulated cluster", () => {
  for (const [partitions, seed] of [
    [16, 1],
    [16, 7],
    [5, 3],
    [64, 11],
  ] as const)
    test(`${partitions} partitions, seed ${seed}: one reader each, spread, moved within a lease and a round`, () => {
      const cluster = simulatedCluster(partitions, seed);
      const steady = () => {
        const readers = cluster.readers();
        const alive = cluster.alive();
        expect(readers.every((reader) => reader !== null && alive.includes(reader))).toBe(true);
        const share = shareOf(partitions, alive.length);
        for (const name of alive) expect(readers.filter((r) => r === name).length).toBeLessThanOrEqual(share);
        // Spread: with partitions to go round, every process reads some.
        if (partitions >= alive.length) for (const name of alive) expect(readers).toContain(name);
      };

      cluster.join("a");
      cluster.run(3000);
      steady();
      cluster.join("b");
      cluster.join("c");
      cluster.run(8000);
      steady();

      cluster.kill("b");
      const killedAt = cluster.now();
      // Until its leases lapse no one else may read its partitions; within a lease and two rounds all are read.
      let movedAt: number | null = null;
      while (cluster.now() < killedAt + cluster.LEASE + 3 * cluster.ROUND) {
        cluster.run(100);
        const readers = cluster.readers();
        if (movedAt === null && readers.every((r) => r !== null && r !== "b")) movedAt = cluster.now();
      }
      expect(movedAt).not.toBeNull();
      expect((movedAt as number) - killedAt).toBeLessThanOrEqual(cluster.LEASE + 2 * cluster.ROUND);
      cluster.run(3000);
      steady();

      cluster.join("d");
      cluster.run(8000);
      steady();
    });
});
