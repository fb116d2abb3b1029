/**
 * The change feed's tailer of one partition of the change log: reads the
 * partition in commit order from its persisted position, whole mutations at
 * a time, hands each batch to its consumers in order, and only once every
 * consumer has taken it moves the position on — so a crash anywhere hands
 * the batch again, never loses one. It reads only while its process holds the
 * partition's lease (partitioned-feed.ts takes and renews it); woken at once
 * after a commit to the partition, polls to catch the rest.
 *
 * After a batch that left the partition dry it waits for the next commit's
 * wake-up (or the poll) rather than reading again at once. While busy, the
 * position a batch reached is saved in the next batch's own transaction when
 * a consumer commits one (`FeedBatch.savePositionIn`: one commit per batch,
 * not two); it is saved on its own once the partition has stayed dry for a
 * poll interval, at the latest after `saveEveryMs`, and at stop — not after
 * every batch, which under a trickle of mutations cost a commit and two reads
 * of its own per mutation. A crash in between hands those entries again,
 * which consumers bear (see `FeedConsumer`).
 */
import { describeError, type Logger } from "../../common/log.ts";
import type { FeedCursor, LoggedChange } from "../model/record-values.ts";
import type { Store, StoreWriter } from "../store/store.ts";
import type { FeedBatch, FeedConsumer } from "./feed-consumer.ts";
import type { Lease } from "./feed-lease.ts";
import type { FeedLag } from "./feed-metrics.ts";

export interface FeedTailerDeps {
  store: Store;
  /** The partition of the change log this tailer reads (0 ≤ partition < the store's `feedPartitions()`). */
  partition: number;
  /** The partition's lease: the tailer reads while it is held, and releases it at stop. */
  lease: Pick<Lease, "held" | "release">;
  /** Handed every batch, in this order. */
  consumers: readonly FeedConsumer[];
  log: Logger;
  /** Name of the persisted position (one per partition). Default `main`. */
  name?: string;
  batchSize?: number;
  /** How long to sleep when idle (a local commit wakes the reader sooner). */
  idleMs?: number;
  /** Longest a reached position waits for the next batch's commit before it is saved on its own. */
  saveEveryMs?: number;
}

/** A place in the partition: the store's cursor just past an entry (null, where allowed: the partition's start). */
type Position = FeedCursor;

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

export function createFeedTailer(deps: FeedTailerDeps) {
  const {
    store,
    partition,
    lease,
    consumers,
    log,
    name = "main",
    batchSize = 500,
    idleMs = 250,
    saveEveryMs = 1000,
  } = deps;
  let stopped = false;
  let woken = false;
  let wake: (() => void) | null = null;
  let running: Promise<void> | null = null;
  // The position reached (every consumer took the batch) and not saved yet, and when one was last saved.
  let unsaved: Position | null = null;
  let savedAt = Date.now();
  // The consumer at work, named in the log line when it fails.
  let consuming: string | null = null;

  // The only lines that know how the store reads and keeps a position: as cursors it hands out.
  const readAfter = async (position: Position | null, limit: number) =>
    (await store.readChanges(partition, position, limit)).entries;
  const positionOf = (entry: LoggedChange): Position => entry.cursor;
  const storedPosition = (): Promise<Position | null> => store.feedPosition(name, partition);
  const lagAfter = (position: Position | null) => store.changeLogLag(partition, position);
  const writePosition = (tx: StoreWriter, position: Position, at: number) =>
    tx.setFeedPosition(name, partition, position, at);

  /** Entries after the position, whole mutations only; `more` when the read may have left some. */
  async function readBatch(position: Position | null): Promise<{ entries: LoggedChange[]; more: boolean }> {
    for (let limit = batchSize; ; limit *= 2) {
      const entries = await readAfter(position, limit);
      if (entries.length < limit) return { entries, more: false };
      const lastMutation = entries[entries.length - 1]?.mutationId;
      const complete = entries.filter((entry) => entry.mutationId !== lastMutation);
      // The batch may have cut the last mutation: keep it for the next read, unless it is all there is.
      if (complete.length > 0) return { entries: complete, more: true };
    }
  }

  /** Saves the position reached, if it is not saved yet. */
  async function savePosition(): Promise<void> {
    if (unsaved === null) return;
    const position = unsaved;
    await store.unitOfWork((tx) => writePosition(tx, position, Date.now()));
    if (unsaved === position) unsaved = null;
    savedAt = Date.now();
  }

  /**
   * Hands what the log holds now to every consumer; the position it reaches stays unsaved.
   * @returns the entries consumed, and whether the log may hold more after them.
   */
  async function advance(): Promise<{ consumed: number; more: boolean }> {
    // The position another process may have moved, and the changes committed up to now.
    store.refreshReads();
    consuming = null;
    const { entries, more } = await readBatch(unsaved ?? (await storedPosition()));
    const last = entries[entries.length - 1];
    if (!last) return { consumed: 0, more: false };
    const reached = unsaved;
    // When a consumer's unit of work wrote `reached` (read only once every consumer returned).
    const carried = { at: null as number | null };
    const batch: FeedBatch = {
      entries,
      mutations: byMutation(entries),
      async savePositionIn(tx) {
        if (reached === null) return;
        const at = Date.now();
        await writePosition(tx, reached, at);
        carried.at = at;
      },
    };
    for (const consumer of consumers) {
      consuming = consumer.name;
      await consumer.consume(batch);
    }
    consuming = null;
    // Written inside a unit of work that committed, or a consumer would have thrown.
    if (carried.at !== null) savedAt = carried.at;
    unsaved = positionOf(last);
    return { consumed: entries.length, more };
  }

  /** Hands what the log holds now to the consumers and saves the position. @returns the number of entries consumed. */
  async function processBatch(): Promise<number> {
    const { consumed } = await advance();
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
        if (!lease.held()) {
          // Another reader may go on from the saved position: what was reached here is theirs to redo.
          unsaved = null;
          await rest(idleMs * 4);
          continue;
        }
        const { consumed, more } = await advance();
        failures = 0;
        // Dry since the last rest (a wake-up that found nothing new, or a whole poll interval).
        if (consumed === 0 || Date.now() - savedAt >= saveEveryMs) await savePosition();
        // A commit made while this batch was read or consumed has woken the reader already: rest returns at once.
        if (!more) await rest(idleMs);
      } catch (error) {
        failures++;
        log.warn("change feed could not advance; retrying", {
          partition,
          failures,
          ...(consuming === null ? {} : { consumer: consuming }),
          ...describeError(error),
        });
        await rest(Math.min(100 * 2 ** failures, 5000));
      }
    }
  }

  return {
    start(): void {
      running ??= loop();
    },
    /** A commit to the partition happened: read now rather than at the next poll. */
    notify(): void {
      woken = true;
      wake?.();
    },
    /** Runs one batch now (whether or not the loop runs); for tools and tests. */
    processBatch,
    /**
     * How far the feed is behind the change log: the entries after the position reached here
     * (else the saved one, which another process's reader may be moving) and the age of the first.
     */
    async lag(): Promise<FeedLag> {
      const position = unsaved ?? (await storedPosition());
      const { changes, oldestCommittedAt } = await lagAfter(position);
      const ageMs = oldestCommittedAt === null ? 0 : Math.max(0, Date.now() - oldestCommittedAt);
      return { changes, seconds: ageMs / 1000 };
    },
    async stop(): Promise<void> {
      stopped = true;
      wake?.();
      if (!running) return;
      await running;
      // A lease lost meanwhile: the partition's next reader goes on from the saved position, ours is stale.
      if (lease.held())
        await savePosition().catch((error) =>
          log.warn("change feed position not saved at stop; the next reader redoes the last batches", {
            partition,
            ...describeError(error),
          }),
        );
      // Redis may be away at shutdown: the lease then simply expires.
      await Promise.race([lease.release().catch(() => undefined), Bun.sleep(1000)]);
    },
  };
}
