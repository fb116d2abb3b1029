/**
 * The change feed's families, read at scrape time: how far the feed is behind the change log,
 * in entries and in seconds (the age of the oldest entry not yet handed to every consumer; 0 when
 * caught up), per partition of the log. There is one partition today, `0`.
 */
import { Gauge } from "prom-client";
import type { Registry } from "../../common/metrics.ts";

export interface FeedLag {
  changes: number;
  seconds: number;
}

/** The partition label of the change log's one partition. */
const PARTITION = "0";

/**
 * `change_feed_lag_changes{partition}` and `change_feed_lag_seconds{partition}` on `registry`,
 * each from a call of `lag` (a store read by primary key). A failed read leaves the gauge without a sample.
 */
export function registerFeedMetrics(registry: Registry, lag: () => Promise<FeedLag>): void {
  const gauge = (name: string, help: string, pick: (lag: FeedLag) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ["partition"],
      registers: [registry],
      async collect() {
        const now = await lag().catch(() => null);
        this.reset();
        if (now) this.set({ partition: PARTITION }, pick(now));
      },
    });
  gauge(
    "change_feed_lag_changes",
    "Change-log entries committed and not yet handed to every feed consumer.",
    (now) => now.changes,
  );
  gauge(
    "change_feed_lag_seconds",
    "Age of the oldest change-log entry not yet handed to every feed consumer; 0 when caught up.",
    (now) => now.seconds,
  );
}
