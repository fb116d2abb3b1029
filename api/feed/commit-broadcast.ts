/**
 * The commit signal across processes: a commit made here is told to this process's listeners at once
 * and published on Redis, so the change feed's reader wakes on whichever API process holds its lease,
 * not only on the one that committed. A hint, never a carrier of changes: the reader polls all the
 * same, so a lost message costs at most one poll interval (`FEED_POLL_MS`).
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
}

/**
 * @returns the signal, and `start()` which subscribes to the channel (resolves once subscribed).
 * Commits within one turn of the event loop are published once.
 */
export function createCommitBroadcast(deps: CommitBroadcastDeps): CommitSignal & { start(): Promise<void> } {
  const { publisher, subscriber, channel, onError = () => undefined } = deps;
  // This process's own messages come back to it too: they are told by their id and skipped.
  const origin = crypto.randomUUID();
  const listeners: (() => void)[] = [];
  const tell = () => {
    for (const listener of listeners) listener();
  };
  let publishing = false;

  subscriber.on("message", (from: string, text: string) => {
    if (from === channel && text !== origin) tell();
  });

  return {
    notify() {
      tell();
      if (publishing) return;
      publishing = true;
      queueMicrotask(() => {
        publishing = false;
        publisher.publish(channel, origin).catch(onError);
      });
    },
    listen: (listener) => void listeners.push(listener),
    start: async () => {
      await subscriber.subscribe(channel);
    },
  };
}
