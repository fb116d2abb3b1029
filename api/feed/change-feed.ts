/**
 * The change feed: reads the change log in commit order from a persisted
 * position, turns each committed mutation into delivery jobs (matcher), splits
 * a job whose body would pass the size limit into several deliveries, logs
 * them as pending deliveries, enqueues them, and only then moves the position
 * on — so a crash anywhere re-reads and re-enqueues (a job still queued is
 * not added twice; a finished delivery's job is dropped unsent), never
 * loses. Woken at once after a local commit; polls to catch the rest.
 *
 * While busy, the position a batch reached is saved in the next batch's own
 * transaction (one commit per batch, not two); it is saved on its own when the
 * log runs dry, at the latest after `saveEveryMs`, and at stop. A crash in
 * between re-reads those entries: their deliveries are already logged (the
 * insert keeps what is there) and their jobs already queued (same job ids).
 */
import type { DeliveryJob } from "../../common/delivery-job.ts";
import { describeError, type Logger } from "../../common/log.ts";
import type { CatalogueSource } from "../model/catalogue.ts";
import type { LoggedChange } from "../model/record-values.ts";
import type { DeliveryRecord, Store } from "../store/store.ts";
import { type CompiledWebhookSource, matchChanges } from "../subscriptions/match-changes.ts";
import type { Lease } from "./feed-lease.ts";
import { prefetchLookups } from "./prefetch-lookups.ts";
import { type PlannedDelivery, splitDelivery } from "./split-delivery.ts";

export interface ChangeFeedDeps {
  store: Store;
  catalogues: CatalogueSource;
  compiler: CompiledWebhookSource;
  lease: Lease;
  /** Puts jobs on the delivery queue (idempotent per job id). */
  enqueue: (jobs: DeliveryJob[]) => Promise<void>;
  log: Logger;
  /** Name of the persisted position. Default `main`. */
  name?: string;
  batchSize?: number;
  /** How long to sleep when idle (a local commit wakes the reader sooner). */
  idleMs?: number;
  /** Longest a reached position waits for the next batch's commit before it is saved on its own. */
  saveEveryMs?: number;
  /** Largest delivery body in bytes (DELIVERY_MAX_BODY_BYTES); larger ones are split. Default 1 MiB. */
  maxBodyBytes?: number;
}

/** Delivery jobs of one mutation's changes (all of one tenant). */
type Matcher = (mutation: readonly LoggedChange[]) => DeliveryJob[];

/** The change log entries split into mutations, in commit order. */
function byMutation(entries: readonly LoggedChange[]): LoggedChange[][] {
  const mutations: LoggedChange[][] = [];
  for (const entry of entries) {
    const current = mutations[mutations.length - 1];
    if (current?.[0]?.mutationId === entry.mutationId) current.push(entry);
    else mutations.push([entry]);
  }
  return mutations;
}

/** The pending delivery log row of a planned delivery. */
const pendingDelivery = ({ job, bodyText }: PlannedDelivery, at: number): DeliveryRecord => ({
  tenantId: job.tenantId,
  id: job.deliveryId,
  webhookId: job.webhookId,
  mutationId: job.mutationId,
  part: job.part ?? 0,
  status: "pending",
  body: bodyText,
  attempts: 0,
  committedAt: job.committedAt,
  createdAt: at,
  updatedAt: at,
});

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
    saveEveryMs = 1000,
    maxBodyBytes = 1024 * 1024,
  } = deps;
  let stopped = false;
  let woken = false;
  let wake: (() => void) | null = null;
  let running: Promise<void> | null = null;
  // The position reached (jobs logged and queued) and not saved yet, and when it was last saved.
  let unsaved: number | null = null;
  let savedAt = Date.now();

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

  /**
   * The matcher of one tenant for one batch: its webhooks, catalogue and the
   * records its filters follow are read once, for all of its changes in the batch.
   */
  async function matcherFor(tenantId: string, changes: readonly LoggedChange[]): Promise<Matcher> {
    const webhooks = await compiler.forTenant(tenantId);
    if (webhooks.length === 0) return () => [];
    const filters = webhooks.flatMap(({ subscription: s }) =>
      [s.filter, s.extendedFilter].filter((f) => f !== null),
    );
    const lookup = await prefetchLookups(store, tenantId, changes, filters);
    const catalogue = await catalogues.get(tenantId);
    const tracked = new Set(
      catalogue.objects.filter((object) => object.tracked).map((object) => object.name),
    );
    const context = {
      now: Date.now(),
      lookup,
      select: () => [],
      isTracked: (objectName: string) => tracked.has(objectName),
    };
    return (mutation) => matchChanges(mutation, webhooks, context);
  }

  async function deliveriesOf(entries: readonly LoggedChange[]): Promise<PlannedDelivery[]> {
    const tenants = Map.groupBy(entries, (entry) => entry.tenantId);
    const matchers = new Map<string, Matcher>();
    for (const [tenantId, changes] of tenants) matchers.set(tenantId, await matcherFor(tenantId, changes));
    const jobs = byMutation(entries).flatMap((mutation) =>
      (matchers.get((mutation[0] as LoggedChange).tenantId) as Matcher)(mutation),
    );
    const planned = jobs.flatMap((job) => splitDelivery(job, maxBodyBytes));
    for (const { job, bytes } of planned) {
      // Delivered all the same (at least once): the selection bound keeps one element's size to
      // the record's own values, so this is a record too large for the limit, not an amplification.
      if (bytes > maxBodyBytes)
        log.warn("one change's element is larger than the delivery body limit; delivered alone", {
          tenantId: job.tenantId,
          webhookId: job.webhookId,
          deliveryId: job.deliveryId,
          bytes,
          maxBodyBytes,
        });
    }
    return planned;
  }

  /** Saves the position reached, if it is not saved yet. */
  async function savePosition(): Promise<void> {
    if (unsaved === null) return;
    const position = unsaved;
    await store.unitOfWork((tx) => tx.setFeedPosition(name, position, Date.now()));
    if (unsaved === position) unsaved = null;
    savedAt = Date.now();
  }

  /** Logs and queues the jobs of what the log holds now; the position it reaches stays unsaved. */
  async function advance(): Promise<number> {
    // The position another process may have moved, and the changes committed up to now.
    store.refreshReads();
    const position = unsaved ?? (await store.feedPosition(name));
    const entries = await readBatch(position);
    const last = entries[entries.length - 1];
    if (!last) return 0;
    const deliveries = await deliveriesOf(entries);
    if (deliveries.length > 0) {
      const at = Date.now();
      const reached = unsaved;
      await store.unitOfWork(async (tx) => {
        if (reached !== null) await tx.setFeedPosition(name, reached, at);
        await tx.insertDeliveries(deliveries.map((delivery) => pendingDelivery(delivery, at)));
      });
      if (reached !== null) savedAt = at;
      await enqueue(deliveries.map((delivery) => delivery.job));
    }
    unsaved = last.position;
    return entries.length;
  }

  /** Processes what the log holds now and saves the position. @returns the number of entries consumed. */
  async function processBatch(): Promise<number> {
    const consumed = await advance();
    await savePosition();
    return consumed;
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
          // Another reader may go on from the saved position: what was reached here is theirs to redo.
          unsaved = null;
          await rest(idleMs * 4);
          continue;
        }
        const consumed = await advance();
        failures = 0;
        if (consumed === 0 || Date.now() - savedAt >= saveEveryMs) await savePosition();
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
      await savePosition().catch((error) =>
        log.warn("change feed position not saved at stop; the next reader redoes the last batches", {
          ...describeError(error),
        }),
      );
      // Redis may be away at shutdown: the lease then simply expires.
      await Promise.race([lease.release().catch(() => undefined), Bun.sleep(1000)]);
    },
  };
}
