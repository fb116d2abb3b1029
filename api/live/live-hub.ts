/**
 * This process's live connections and their subscriptions, by tenant and by token: what the
 * fan-out matches a tenant's changes against, what the token re-check and the shutdown walk, and
 * where the per-token connection limit is kept. In memory, per process; no I/O.
 */
import type { Subscription } from "../subscriptions/subscription.ts";

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
  // Per tenant, in subscription order: the matcher's list, rebuilt lazily after a change.
  const subscribers = new Map<string, Map<LiveSubscriberConnection, Map<string, Subscription>>>();
  const listCache = new Map<string, LiveSubscriber[]>();
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
      if (count === 1) await events.tenantWatched(token.tenantId);
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
      const ofTenant = subscribers.get(token.tenantId);
      const mine = ofTenant?.get(connection);
      if (mine) {
        subscriptionCount -= mine.size;
        ofTenant?.delete(connection);
        listCache.delete(token.tenantId);
      }
      const count = (connectionsOfTenant.get(token.tenantId) ?? 1) - 1;
      if (count > 0) connectionsOfTenant.set(token.tenantId, count);
      else {
        connectionsOfTenant.delete(token.tenantId);
        subscribers.delete(token.tenantId);
        events.tenantUnwatched(token.tenantId);
      }
    },
    /** Adds a subscription of an admitted connection (ignored for one not admitted, or released). */
    subscribe(connection: LiveSubscriberConnection, id: string, subscription: Subscription): void {
      const token = tokenOf.get(connection);
      if (!token) return;
      const ofTenant = subscribers.get(token.tenantId) ?? new Map();
      subscribers.set(token.tenantId, ofTenant);
      const mine = ofTenant.get(connection) ?? new Map<string, Subscription>();
      ofTenant.set(connection, mine);
      if (!mine.has(id)) subscriptionCount++;
      mine.set(id, subscription);
      listCache.delete(token.tenantId);
    },
    unsubscribe(connection: LiveSubscriberConnection, id: string): void {
      const token = tokenOf.get(connection);
      const mine = token && subscribers.get(token.tenantId)?.get(connection);
      if (!mine?.delete(id)) return;
      subscriptionCount--;
      listCache.delete((token as TokenRef).tenantId);
    },
    /** The tenant's subscriptions on this process, in the order they were made per connection. */
    subscribersOf(tenantId: string): readonly LiveSubscriber[] {
      const cached = listCache.get(tenantId);
      if (cached) return cached;
      const list: LiveSubscriber[] = [];
      for (const [connection, mine] of subscribers.get(tenantId) ?? [])
        for (const [id, subscription] of mine) list.push({ connection, id, subscription });
      listCache.set(tenantId, list);
      return list;
    },
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
