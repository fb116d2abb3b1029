/**
 * The commit signal across processes: a commit made here is told to this process's listeners at once
 * and published on Redis with its partition, so the partition's reader wakes on whichever API process
 * holds its lease, not only on the one that committed. A hint, never a carrier of changes: readers
 * poll all the same, so a lost message costs at most one poll interval (`FEED_POLL_MS`).
 *
 * Published at most once per `minGapMs` (5 ms), with every partition committed to meanwhile: a hint
 * after quiet goes at once, one during a burst waits for the gap's end, so under load a reader
 * elsewhere wakes at most that much later and Redis gets a few hundred messages a second, not one
 * per commit (a PUBLISH per commit took 13% of the API's CPU at 1,600 single-insert mutations a second).
 * A commit to a partition read in this process is not published at all: no other process reads it
 * (one that takes its lease over reads at once). At 1,000 mutations/s, one commit every millisecond
 * or so, each was a message of its own: ~45 µs of the API's CPU per mutation.
 */
import type { Redis } from "ioredis";
import type { CommitSignal } from "./commit-signal.ts";

export interface CommitBroadcastDeps {
  /** Publishes the hint (any connection not in subscriber mode). */
  publisher: Redis;
  /** A connection in subscriber mode (it may carry other channels too). */
  subscriber: Redis;
  channel: string;
  /** Called when publishing fails (Redis away): the hint is dropped, the reader's poll remains. */
  onError?: (error: unknown) => void;
  /** Least time between two published hints, ms (default 5). */
  minGapMs?: number;
}

/** A message: the publishing process's id, then the partitions committed to, `<origin>:<p>,<p>,…`. */
const MESSAGE = /^([^:]+):((?:0|[1-9][0-9]{0,4})(?:,(?:0|[1-9][0-9]{0,4}))*)$/;

/**
 * @returns the signal, and `start()` which subscribes to the channel (resolves once subscribed).
 * Commits within one turn of the event loop are published once, with every partition they touched,
 * and at most once per `minGapMs`.
 */
export function createCommitBroadcast(deps: CommitBroadcastDeps): CommitSignal & { start(): Promise<void> } {
  const { publisher, subscriber, channel, onError = () => undefined, minGapMs = 5 } = deps;
  // This process's own messages come back to it too: they are told by their id and skipped.
  const origin = crypto.randomUUID();
  const listeners: ((partition: number) => void)[] = [];
  const readers: ((partition: number) => boolean)[] = [];
  const tell = (partition: number) => {
    for (const listener of listeners) listener(partition);
  };
  const pending = new Set<number>();
  let publishedAt = Number.NEGATIVE_INFINITY;
  const publish = () => {
    publishedAt = performance.now();
    const partitions = [...pending].join(",");
    pending.clear();
    publisher.publish(channel, `${origin}:${partitions}`).catch(onError);
  };

  subscriber.on("message", (from: string, text: string) => {
    if (from !== channel) return;
    const match = MESSAGE.exec(text);
    if (!match || match[1] === origin) return;
    for (const partition of new Set((match[2] as string).split(",").map(Number))) tell(partition);
  });

  return {
    notify(partition) {
      tell(partition);
      if (readers.some((readsHere) => readsHere(partition))) return;
      if (pending.size === 0) {
        const wait = publishedAt + minGapMs - performance.now();
        if (wait <= 0) queueMicrotask(publish);
        else setTimeout(publish, wait);
      }
      pending.add(partition);
    },
    listen(listener, readsHere) {
      listeners.push(listener);
      if (readsHere) readers.push(readsHere);
    },
    start: async () => {
      await subscriber.subscribe(channel);
    },
  };
}
