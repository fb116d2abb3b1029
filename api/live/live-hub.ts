/**
 * This process's live connections and their subscriptions, by tenant and by token: what the
 * fan-out matches a tenant's changes against, what the token re-check and the shutdown walk, and
 * where the per-token connection limit is kept. In memory, per process; no I/O.
 */
import type { ChangeEntry } from "../model/record-values.ts";
import type { Subscription } from "../subscriptions/subscription.ts";
import { createSubscriptionIndex, type SubscriptionIndex } from "../subscriptions/subscription-index.ts";

/** What the hub needs of a connection: where to send a matched event, how to close it. */
export interface LiveSubscriberConnection {
  /** Sends one `next` (or `data`) message for subscription `id`. */
  deliver(id: string, payload: unknown): void;
  /** Closes the connection because its token no longer holds. */
  revoke(message: string): void;
  /** Closes the connection because the process is stopping. */
  shutdown(): void;
  /** Sends the protocol's keep-alive. */
  keepAlive(): void;
}

/** One subscription on one connection: what the matcher reads (`subscription`) and where it goes. */
export interface LiveSubscriber {
  connection: LiveSubscriberConnection;
  id: string;
  subscription: Subscription;
}

/** The token a connection authenticated with. */
export interface TokenRef {
  tenantId: string;
  tokenId: string;
}

export interface LiveHubEvents {
  /** The tenant's first connection on this process was admitted: its changes are now wanted here. */
  tenantWatched(tenantId: string): Promise<void>;
  /** The tenant's last connection on this process went. */
  tenantUnwatched(tenantId: string): void;
}

export type LiveHub = ReturnType<typeof createLiveHub>;

export function createLiveHub(maxConnectionsPerToken: number, events: LiveHubEvents) {
  const tokenOf = new Map<LiveSubscriberConnection, TokenRef>();
  const byToken = new Map<string, Set<LiveSubscriberConnection>>();
  const connectionsOfTenant = new Map<string, number>();
  /** Per watched tenant, its watch (tenantWatched): settled once its changes reach this process. */
  const watching = new Map<string, Promise<void>>();
  // Per connection its subscriptions by id; per tenant the index the fan-out asks for candidates.
  const mineOf = new Map<LiveSubscriberConnection, Map<string, LiveSubscriber>>();
  const indexes = new Map<string, SubscriptionIndex<LiveSubscriber>>();
  let subscriptionCount = 0;
  const tokenKey = ({ tenantId, tokenId }: TokenRef) => `${tenantId}\u0000${tokenId}`;

  return {
    /**
     * Admits an authenticated connection under its token; false when the token holds
     * `maxConnectionsPerToken` already. Resolves once the tenant's changes reach this process.
     */
    async admit(connection: LiveSubscriberConnection, token: TokenRef): Promise<boolean> {
      const key = tokenKey(token);
      const held = byToken.get(key) ?? new Set();
      if (held.size >= maxConnectionsPerToken) return false;
      held.add(connection);
      byToken.set(key, held);
      tokenOf.set(connection, token);
      const count = (connectionsOfTenant.get(token.tenantId) ?? 0) + 1;
      connectionsOfTenant.set(token.tenantId, count);
      // The tenant's later connections wait for the same watch: none is admitted before its changes arrive.
      if (count === 1) watching.set(token.tenantId, events.tenantWatched(token.tenantId));
      await watching.get(token.tenantId);
      return true;
    },
    /** Forgets the connection and its subscriptions (idempotent). */
    release(connection: LiveSubscriberConnection): void {
      const token = tokenOf.get(connection);
      if (!token) return;
      tokenOf.delete(connection);
      const key = tokenKey(token);
      byToken.get(key)?.delete(connection);
      if (byToken.get(key)?.size === 0) byToken.delete(key);
      const mine = mineOf.get(connection);
      if (mine) {
        subscriptionCount -= mine.size;
        mineOf.delete(connection);
        const index = indexes.get(token.tenantId);
        for (const subscriber of mine.values()) index?.remove(subscriber);
      }
      const count = (connectionsOfTenant.get(token.tenantId) ?? 1) - 1;
      if (count > 0) connectionsOfTenant.set(token.tenantId, count);
      else {
        connectionsOfTenant.delete(token.tenantId);
        watching.delete(token.tenantId);
        indexes.delete(token.tenantId);
        events.tenantUnwatched(token.tenantId);
      }
    },
    /** Adds a subscription of an admitted connection (ignored for one not admitted, or released). */
    subscribe(connection: LiveSubscriberConnection, id: string, subscription: Subscription): void {
      const token = tokenOf.get(connection);
      if (!token) return;
      const index = indexes.get(token.tenantId) ?? createSubscriptionIndex<LiveSubscriber>();
      indexes.set(token.tenantId, index);
      const mine = mineOf.get(connection) ?? new Map<string, LiveSubscriber>();
      mineOf.set(connection, mine);
      const held = mine.get(id);
      if (held) index.remove(held);
      else subscriptionCount++;
      const subscriber = { connection, id, subscription };
      mine.set(id, subscriber);
      index.add(subscriber);
    },
    unsubscribe(connection: LiveSubscriberConnection, id: string): void {
      const token = tokenOf.get(connection);
      const subscriber = mineOf.get(connection)?.get(id);
      if (!token || !subscriber) return;
      mineOf.get(connection)?.delete(id);
      subscriptionCount--;
      indexes.get(token.tenantId)?.remove(subscriber);
    },
    /**
     * The tenant's subscriptions some of `changes` may fire (subscription-index.ts), in the order
     * they were made: every one that fires is among them, most that cannot are not.
     */
    candidatesOf(tenantId: string, changes: readonly ChangeEntry[]): LiveSubscriber[] {
      return indexes.get(tenantId)?.candidates(changes) ?? [];
    },
    /** True when the tenant has a subscription on this process. */
    hasSubscribers: (tenantId: string): boolean => (indexes.get(tenantId)?.size() ?? 0) > 0,
    /** The tokens held by connections here, each with its connections. */
    tokens(): [TokenRef, LiveSubscriberConnection[]][] {
      return [...byToken.values()].flatMap((held) => {
        const first = held.values().next().value;
        const token = first && tokenOf.get(first);
        return token ? [[token, [...held]] as [TokenRef, LiveSubscriberConnection[]]] : [];
      });
    },
    connections: (): LiveSubscriberConnection[] => [...tokenOf.keys()],
    counts: () => ({ connections: tokenOf.size, subscriptions: subscriptionCount }),
  };
}
