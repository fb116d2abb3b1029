/**
 * The change feed: reads the change log in commit order from a persisted
 * position, turns each committed mutation into delivery jobs (matcher), logs
 * them as pending deliveries, enqueues them, and only then moves the position
 * on — so a crash anywhere re-reads and re-enqueues (idempotent by job id),
 * never loses. Woken at once after a local commit; polls to catch the rest.
 */
import type { DeliveryJob } from "../../common/delivery-job.ts";
import { describeError, type Logger } from "../../common/log.ts";
import type { CatalogueService } from "../catalogue/catalogue-service.ts";
import type { LoggedChange } from "../catalogue/record-values.ts";
import type { DeliveryRecord, Store } from "../store/store.ts";
import type { Lease } from "./feed-lease.ts";
import { matchChanges } from "./match-changes.ts";
import { prefetchLookups } from "./prefetch-lookups.ts";
import type { createWebhookCompiler } from "./webhook-compiler.ts";

export interface ChangeFeedDeps {
  store: Store;
  catalogues: CatalogueService;
  compiler: ReturnType<typeof createWebhookCompiler>;
  lease: Lease;
  /** Puts jobs on the delivery queue (idempotent per job id). */
  enqueue: (jobs: DeliveryJob[]) => Promise<void>;
  log: Logger;
  /** Name of the persisted position. Default `main`. */
  name?: string;
  batchSize?: number;
  /** How long to sleep when idle (a local commit wakes the reader sooner). */
  idleMs?: number;
}

export type ChangeFeed = ReturnType<typeof createChangeFeed>;

export function createChangeFeed(deps: ChangeFeedDeps) {
  const {
    store,
    catalogues,
    compiler,
    lease,
    enqueue,
    log,
    name = "main",
    batchSize = 500,
    idleMs = 250,
  } = deps;
  let stopped = false;
  let woken = false;
  let wake: (() => void) | null = null;
  let running: Promise<void> | null = null;

  /** Entries after the position, whole mutations only. */
  async function readBatch(position: number): Promise<LoggedChange[]> {
    for (let limit = batchSize; ; limit *= 2) {
      const entries = await store.readChanges(position, limit);
      if (entries.length < limit) return entries;
      const lastMutation = entries[entries.length - 1]?.mutationId;
      const complete = entries.filter((entry) => entry.mutationId !== lastMutation);
      // The batch may have cut the last mutation: keep it for the next read, unless it is all there is.
      if (complete.length > 0) return complete;
    }
  }

  async function jobsOf(changes: LoggedChange[]): Promise<DeliveryJob[]> {
    const tenantId = (changes[0] as LoggedChange).tenantId;
    const webhooks = await compiler.forTenant(tenantId);
    if (webhooks.length === 0) return [];
    const filters = webhooks.flatMap(({ subscription: s }) =>
      [s.filter, s.extendedFilter].filter((f) => f !== null),
    );
    const lookup = await prefetchLookups(store, tenantId, changes, filters);
    const catalogue = await catalogues.get(tenantId);
    const tracked = new Set(
      catalogue.objects.filter((object) => object.tracked).map((object) => object.name),
    );
    return matchChanges(changes, webhooks, {
      now: Date.now(),
      lookup,
      select: () => [],
      isTracked: (objectName) => tracked.has(objectName),
    });
  }

  /** Processes what the log holds now. @returns the number of entries consumed. */
  async function processBatch(): Promise<number> {
    // The position another process may have moved, and the changes committed up to now.
    store.refreshReads();
    const position = await store.feedPosition(name);
    const entries = await readBatch(position);
    const last = entries[entries.length - 1];
    if (!last) return 0;
    const jobs: DeliveryJob[] = [];
    for (let start = 0; start < entries.length; ) {
      let end = start + 1;
      while (end < entries.length && entries[end]?.mutationId === entries[start]?.mutationId) end++;
      jobs.push(...(await jobsOf(entries.slice(start, end))));
      start = end;
    }
    if (jobs.length > 0) {
      const at = Date.now();
      const deliveries = jobs.map(
        (job): DeliveryRecord => ({
          tenantId: job.tenantId,
          id: job.deliveryId,
          webhookId: job.webhookId,
          mutationId: job.mutationId,
          status: "pending",
          body: JSON.stringify(job.body),
          attempts: 0,
          committedAt: job.committedAt,
          createdAt: at,
          updatedAt: at,
        }),
      );
      await store.unitOfWork((tx) => tx.insertDeliveries(deliveries));
      await enqueue(jobs);
    }
    await store.unitOfWork((tx) => tx.setFeedPosition(name, last.position, Date.now()));
    return entries.length;
  }

  const rest = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken || stopped) return resolve();
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  async function loop(): Promise<void> {
    let failures = 0;
    while (!stopped) {
      woken = false;
      try {
        if (!(await lease.hold())) {
          await rest(idleMs * 4);
          continue;
        }
        const consumed = await processBatch();
        failures = 0;
        if (consumed === 0) await rest(idleMs);
      } catch (error) {
        failures++;
        log.warn("change feed could not advance; retrying", { failures, ...describeError(error) });
        await rest(Math.min(100 * 2 ** failures, 5000));
      }
    }
  }

  return {
    start(): void {
      running ??= loop();
    },
    /** A commit happened here: read now rather than at the next poll. */
    notify(): void {
      woken = true;
      wake?.();
    },
    /** Runs one batch now (whether or not the loop runs); for tools and tests. */
    processBatch,
    async stop(): Promise<void> {
      stopped = true;
      wake?.();
      if (!running) return;
      await running;
      // Redis may be away at shutdown: the lease then simply expires.
      await Promise.race([lease.release().catch(() => undefined), Bun.sleep(1000)]);
    },
  };
}
