/**
 * The change feed of one API process: the store's P partitions spread over
 * the live API processes, one reader (feed-tailer.ts) per partition this
 * process holds the Redis lease of. Every round (a fifth of the lease's life,
 * at most a second) the process beats its heartbeat (feed-members.ts), reads
 * every partition's lease holder, renews its own leases, and takes or gives
 * up leases as planAssignment says (partition-assignment.ts, where the scheme
 * and why it holds are written down). A partition given up is first stopped
 * here (its batch finished, its position saved), then its lease released, so
 * the next holder goes on where this one left off.
 *
 * Timing: a heartbeat lives half a lease, a lease is renewed every third of
 * its life, so a dead process drops out of the others' view before any of its
 * leases lapse, and its partitions are read again within FEED_LEASE_MS plus
 * one round. A clean stop releases the leases at once.
 */
import { hostname } from "node:os";
import type Redis from "ioredis";
import { describeError, type Logger } from "../../common/log.ts";
import type { RedisKeys } from "../../common/redis-keys.ts";
import type { Store } from "../store/store.ts";
import type { FeedConsumer } from "./feed-consumer.ts";
import { createLease, type Lease } from "./feed-lease.ts";
import { createFeedMembers } from "./feed-members.ts";
import type { FeedLag } from "./feed-metrics.ts";
import { createFeedTailer } from "./feed-tailer.ts";
import { planAssignment } from "./partition-assignment.ts";

export interface PartitionedFeedDeps {
  store: Store;
  redis: Redis;
  keys: Pick<RedisKeys, "feedLease" | "feedMembers">;
  /** Handed every batch of every partition, in this order (batches of different partitions concurrently). */
  consumers: readonly FeedConsumer[];
  log: Logger;
  /** How long a partition's lease lives unless renewed (FEED_LEASE_MS). */
  leaseMs: number;
  /** This process's name in Redis: its heartbeat, and the value of the leases it holds. Default `<host>:<pid>:<random>`. */
  self?: string;
  /** Name of the persisted positions. Default `main`. */
  name?: string;
  batchSize?: number;
  /** How long a partition's reader sleeps when idle (a commit wakes it sooner). */
  idleMs?: number;
}

type Tailer = ReturnType<typeof createFeedTailer>;

export function createPartitionedFeed(deps: PartitionedFeedDeps) {
  const { store, redis, keys, consumers, log, leaseMs, name, batchSize, idleMs } = deps;
  const self = deps.self ?? `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  const partitions = store.feedPartitions();
  const all = Array.from({ length: partitions }, (_, p) => p);
  const roundMs = Math.max(20, Math.min(1000, Math.floor(leaseMs / 5)));
  const members = createFeedMembers(redis, keys.feedMembers, self, Math.floor(leaseMs / 2));
  const leases = all.map((p) => createLease(redis, keys.feedLease(p), leaseMs, self));
  const tailerOf = (p: number): Tailer =>
    createFeedTailer({
      store,
      partition: p,
      lease: leases[p] as Lease,
      consumers,
      log,
      name,
      batchSize,
      idleMs,
    });
  /** The running reader of each partition held here. */
  const readers: (Tailer | null)[] = all.map(() => null);
  /** A reader being stopped (its lease given up or lost); the partition is not taken again until it is. */
  const stopping: (Promise<void> | null)[] = all.map(() => null);
  /** Readers that never run, for `processBatch` and `lag` where no reader runs here. */
  const idle: (Tailer | null)[] = all.map(() => null);
  const readerOf = (p: number): Tailer => {
    const running = readers[p];
    if (running) return running;
    const reader = idle[p] ?? tailerOf(p);
    idle[p] = reader;
    return reader;
  };

  let stopped = false;
  let running: Promise<void> | null = null;
  let wake: (() => void) | null = null;
  let failing = false;

  /** Stops partition `p`'s reader; `release` (a lease given up) releases the lease once its position is saved. */
  function stopReader(p: number, release: boolean): void {
    const reader = readers[p];
    if (!reader) return;
    readers[p] = null;
    // The tailer releases the lease at its stop; a lost lease must not be counted held meanwhile.
    if (!release) void leases[p]?.release().catch(() => undefined);
    stopping[p] = reader.stop().finally(() => {
      stopping[p] = null;
    });
  }

  function startReader(p: number): void {
    // A round that outlived the stop (Redis slow to answer) starts nothing: its leases simply lapse.
    if (stopped) return;
    const reader = tailerOf(p);
    readers[p] = reader;
    reader.start();
  }

  /** Renews the leases held here; returns the partitions whose lease is (still) this process's. */
  async function renew(holders: readonly (string | null)[]): Promise<Set<number>> {
    // A lease given up since Redis was read (its reader stopped, its key deleted) is not taken back here.
    const mine = all.filter((p) => holders[p] === self && !(stopping[p] && !leases[p]?.held()));
    const renewed = await Promise.all(mine.map(async (p) => ((await leases[p]?.hold()) ? p : null)));
    const kept = new Set(renewed.filter((p) => p !== null));
    for (const p of all) {
      if (readers[p] && !kept.has(p)) {
        log.warn("change feed partition lost (its lease lapsed or was taken)", { partition: p });
        stopReader(p, false);
      }
      // Held in Redis with no reader here (a take whose answer came late): read it.
      if (kept.has(p) && !readers[p] && !stopping[p]) startReader(p);
    }
    return kept;
  }

  async function round(): Promise<void> {
    const live = await members.beat();
    const holders = await redis.mget(...all.map((p) => keys.feedLease(p)));
    const kept = await renew(holders);
    const view = holders.map((holder, p) => (holder === self && !kept.has(p) ? null : holder));
    const moves = planAssignment({ partitions, members: live, self, holders: view });
    for (const p of moves.release) stopReader(p, true);
    const taken = await Promise.all(
      moves.take.map(async (p) => (!stopping[p] && !readers[p] && (await leases[p]?.hold()) ? p : null)),
    );
    for (const p of taken) if (p !== null) startReader(p);
    const took = taken.filter((p) => p !== null);
    if (took.length > 0 || moves.release.length > 0)
      log.info("change feed partitions moved", { took, gaveUp: moves.release, processes: live.length });
  }

  const rest = (ms: number) =>
    new Promise<void>((resolve) => {
      if (stopped) return resolve();
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  async function loop(): Promise<void> {
    while (!stopped) {
      try {
        await round();
        if (failing) log.info("change feed partitions assigned again");
        failing = false;
      } catch (error) {
        // Leases not renewed lapse on their own: readers stop reading when theirs runs out.
        if (!failing)
          log.warn("change feed partitions not assigned (Redis?); retrying", describeError(error));
        failing = true;
      }
      await rest(roundMs);
    }
  }

  return {
    /** This process's name in Redis (the value of the leases it holds). */
    self,
    start(): void {
      running ??= loop();
    },
    /** A commit to `partition` happened: its reader, if it runs here, reads now. */
    notify(partition: number): void {
      readers[partition]?.notify();
    },
    /** Whether this process reads `partition` now (its lease held). */
    reads: (partition: number): boolean => readers[partition] != null && leases[partition]?.held() === true,
    /** The partitions this process reads now (their lease held). */
    held: (): number[] => all.filter((p) => readers[p] !== null && leases[p]?.held()),
    /**
     * Runs one batch of every partition now, held here or not (whether or not the feed runs); for
     * tools and tests. @returns the entries consumed.
     */
    async processBatch(): Promise<number> {
      let consumed = 0;
      for (const p of all) consumed += await readerOf(p).processBatch();
      return consumed;
    },
    /**
     * How far each partition's reading is behind it, by partition: from the position reached here
     * where this process reads it, else from the saved one (which another process may be moving).
     */
    lag: (): Promise<FeedLag[]> => Promise.all(all.map((p) => readerOf(p).lag())),
    /** Stops the readers (their positions saved, leases released) and leaves the membership. */
    async stop(): Promise<void> {
      stopped = true;
      wake?.();
      // A round waiting on Redis (away at shutdown) is left behind: its leases lapse on their own.
      if (running) await Promise.race([running, Bun.sleep(roundMs + 1000)]);
      for (const p of all) stopReader(p, true);
      await Promise.all(stopping);
      await Promise.race([members.leave().catch(() => undefined), Bun.sleep(1000)]);
    },
  };
}
