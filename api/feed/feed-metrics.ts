/**
 * The change feed's families, read at scrape time, per partition of the change log: how far each
 * partition's reading is behind it, in entries and in seconds (the age of the oldest entry not yet
 * handed to every consumer; 0 when caught up), and which partitions this process reads. Every API
 * process reports the lag of every partition (from its own reader where it holds the partition,
 * else from the saved position), so a partition no process reads still shows its growing lag:
 * aggregate across processes with `max by (partition)`.
 */
import { Gauge } from "prom-client";
import type { Registry } from "../../common/metrics.ts";

export interface FeedLag {
  changes: number;
  seconds: number;
}

/** How long one lag read serves a scrape's families. */
const SCRAPE_MS = 250;

/** What the families read from the feed. */
export interface FeedGauges {
  /** Each partition's lag, by partition (a store read by index each). */
  lag(): Promise<readonly FeedLag[]>;
  /** The partitions this process reads now. */
  held(): readonly number[];
  /** P, the store's partitions. */
  partitions: number;
}

/**
 * `change_feed_lag_changes{partition}`, `change_feed_lag_seconds{partition}` and
 * `change_feed_partition_held{partition}` (1 where this process holds the partition's lease, else 0)
 * on `registry`. A failed lag read leaves the lag gauges without samples.
 */
export function registerFeedMetrics(registry: Registry, feed: FeedGauges): void {
  // One read of every partition's lag serves both families of a scrape.
  let last: { at: number; lag: Promise<readonly FeedLag[] | null> } | null = null;
  const lagNow = () => {
    if (!last || Date.now() - last.at > SCRAPE_MS)
      last = { at: Date.now(), lag: feed.lag().catch(() => null) };
    return last.lag;
  };
  const lagGauge = (name: string, help: string, pick: (lag: FeedLag) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ["partition"],
      registers: [registry],
      async collect() {
        const now = await lagNow();
        this.reset();
        for (const [partition, lag] of (now ?? []).entries())
          this.set({ partition: String(partition) }, pick(lag));
      },
    });
  lagGauge(
    "change_feed_lag_changes",
    "Change-log entries of the partition committed and not yet handed to every feed consumer.",
    (now) => now.changes,
  );
  lagGauge(
    "change_feed_lag_seconds",
    "Age of the partition's oldest change-log entry not yet handed to every feed consumer; 0 when caught up.",
    (now) => now.seconds,
  );
  new Gauge({
    name: "change_feed_partition_held",
    help: "1 when this API process holds the lease of the change-log partition and reads it, else 0.",
    labelNames: ["partition"],
    registers: [registry],
    collect() {
      const held = new Set(feed.held());
      for (let partition = 0; partition < feed.partitions; partition++)
        this.set({ partition: String(partition) }, held.has(partition) ? 1 : 0);
    },
  });
}
