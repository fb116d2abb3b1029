/**
 * Spare fetchers for the slots slow attempts hold. DISPATCH_CONCURRENCY bounds
 * the attempts at work; an attempt still waiting for its answer after
 * SLOW_ATTEMPT_MS (0.5 s) waits on a slow or dead endpoint, it does not
 * work. For each such attempt a spare fetcher takes jobs in its place until
 * it ends (at most `max` spares at once), so a dead endpoint, its whole limit
 * hanging until the timeout, takes none of the dispatcher's capacity from the
 * other endpoints. Spares are created when first needed and kept, stopped,
 * for the next time.
 */

/** Something that takes jobs from the queue: here, one BullMQ worker of one slot. */
export interface Fetcher {
  /** Starts taking jobs (again). */
  start(): void;
  /** Stops taking jobs; the one it runs goes on to its end. */
  stop(): void;
  /** Whether it is running a job now. */
  busy(): boolean;
}

export interface SpareFetchers {
  /** An attempt run by `fetcher` has turned slow. */
  slowStarted(fetcher: Fetcher): void;
  /** A slow attempt run by `fetcher` has ended. */
  slowEnded(fetcher: Fetcher): void;
  /** Stops every spare for good (at shutdown). */
  close(): void;
}

export function createSpareFetchers(max: number, create: () => Fetcher): SpareFetchers {
  const spares: Fetcher[] = [];
  const running = new Set<Fetcher>();
  // Slow attempts per fetcher (spares and the regular ones alike).
  const slowBy = new Map<Fetcher, number>();
  let slow = 0;
  let closed = false;

  /** One spare running per slow attempt, up to `max`. */
  const rebalance = () => {
    const wanted = closed ? 0 : Math.min(slow, max);
    while (running.size < wanted) {
      // A stopped spare still finishing a job would add no capacity before that job ends: idle ones first.
      const stopped = spares.filter((s) => !running.has(s));
      let spare = stopped.find((s) => !s.busy());
      if (!spare && spares.length < max) {
        spare = create();
        spares.push(spare);
      }
      spare ??= stopped[0] as Fetcher;
      running.add(spare);
      spare.start();
    }
    while (running.size > wanted) {
      // One not held up itself, when there is one: its slot is the one the ended attempt gave back.
      const spare = [...running].find((s) => !slowBy.has(s)) ?? (running.values().next().value as Fetcher);
      running.delete(spare);
      spare.stop();
    }
  };

  return {
    slowStarted(fetcher) {
      slow++;
      slowBy.set(fetcher, (slowBy.get(fetcher) ?? 0) + 1);
      rebalance();
    },
    slowEnded(fetcher) {
      slow--;
      const left = (slowBy.get(fetcher) ?? 1) - 1;
      if (left > 0) slowBy.set(fetcher, left);
      else slowBy.delete(fetcher);
      rebalance();
    },
    close() {
      closed = true;
      rebalance();
    },
  };
}
