/**
 * The change feed's live-subscription consumer: a batch of committed mutations → one message per
 * tenant, its mutations in commit order, published for every API process (each matches them
 * against the live subscriptions its sockets hold). Publishing is at most once: a batch handed
 * again (a failure, a crash, a lease hand-over) is published again, and receivers drop a mutation
 * they have seen (`LiveFeedMessage.mutations[].mutationId`).
 *
 * Only the tenants someone listens to are encoded and published: the outlet says, after the batch
 * was read (so after its changes committed), which of the batch's tenants any process listens to.
 */
import type { LoggedChange } from "../model/record-values.ts";
import type { FeedConsumer } from "./feed-consumer.ts";

/** What one tenant's part of a batch carries on the wire. */
export interface LiveFeedMessage {
  tenantId: string;
  /** Whole mutations, in commit order; each one's entries in their order within it. */
  mutations: LoggedChange[][];
}

/** Where the messages go: every API process listening (Redis pub/sub, api/live/live-audience.ts). */
export interface LiveOutlet {
  /**
   * The tenants among `tenantIds` that some process may listen to now: at least every one whose
   * listener was in place before the batch's changes committed.
   */
  heard(tenantIds: readonly string[]): ReadonlySet<string>;
  /** Sends one tenant's message to every process listening to the tenant. */
  publish(tenantId: string, message: string): Promise<void>;
}

function encodeLiveMessage(message: LiveFeedMessage): string {
  return JSON.stringify(message);
}

/** @returns the message, or null when `text` is not one (a foreign publisher on the channel). */
export function decodeLiveMessage(text: string): LiveFeedMessage | null {
  try {
    const value = JSON.parse(text) as LiveFeedMessage;
    if (typeof value?.tenantId !== "string" || !Array.isArray(value.mutations)) return null;
    return value;
  } catch {
    return null;
  }
}

export function createLiveConsumer(outlet: LiveOutlet): FeedConsumer {
  return {
    name: "live-subscriptions",
    async consume(batch) {
      const byTenant = Map.groupBy(batch.mutations, (mutation) => (mutation[0] as LoggedChange).tenantId);
      const heard = outlet.heard([...byTenant.keys()]);
      // One connection publishes in order, so each tenant's messages arrive in commit order.
      await Promise.all(
        [...byTenant]
          .filter(([tenantId]) => heard.has(tenantId))
          .map(([tenantId, mutations]) =>
            outlet.publish(
              tenantId,
              encodeLiveMessage({ tenantId, mutations: mutations as LoggedChange[][] }),
            ),
          ),
      );
    },
  };
}
