/**
 * The receiving end of the fan-out, one per API process: the tenants' change messages from Redis
 * pub/sub (a channel per tenant, subscribed while a socket of the tenant is held here) in → each
 * mutation matched against the candidates the hub's index gives among this process's live
 * subscriptions of the tenant (the webhooks' matcher) → one event per firing change, sent on its
 * connection (subscriptions pinned to other values cost neither a filter test nor a look-up).
 * Messages of one tenant are handled one after the other, so events leave in commit order; a
 * mutation seen already (a batch the feed handed again) is dropped.
 */
import type Redis from "ioredis";
import { describeError, type Logger } from "../../common/log.ts";
import type { RedisKeys } from "../../common/redis-keys.ts";
import { decodeLiveMessage, type LiveFeedMessage } from "../feed/live-consumer.ts";
import { prefetchLookups } from "../feed/prefetch-lookups.ts";
import type { CatalogueSource } from "../model/catalogue.ts";
import type { Store } from "../store/store.ts";
import { matchChanges } from "../subscriptions/match-changes.ts";
import type { LiveAudience } from "./live-audience.ts";
import type { LiveHub } from "./live-hub.ts";

/** Mutation ids remembered to drop a batch handed again; a redo is at most a few batches back. */
const REMEMBERED_MUTATIONS = 10_000;

export interface LiveFanoutDeps {
  /** A connection of its own: in subscriber mode it can do nothing else. */
  subscriber: Redis;
  /** Told which tenants this process listens to, so that their changes are published at all. */
  audience: Pick<LiveAudience, "listen" | "unlisten">;
  keys: RedisKeys;
  store: Store;
  catalogues: CatalogueSource;
  log: Logger;
}

export function createLiveFanout(deps: LiveFanoutDeps) {
  const { subscriber, audience, keys, store, catalogues, log } = deps;
  let hub: LiveHub | null = null;
  const chains = new Map<string, Promise<void>>();
  const seen = new Set<string>();

  async function deliver(message: LiveFeedMessage): Promise<void> {
    if (!hub?.hasSubscribers(message.tenantId)) return;
    const fresh = message.mutations.filter((mutation) => {
      const id = mutation[0]?.mutationId;
      if (id === undefined || seen.has(id)) return false;
      seen.add(id);
      if (seen.size > REMEMBERED_MUTATIONS) seen.delete(seen.values().next().value as string);
      return true;
    });
    if (fresh.length === 0) return;
    const candidates = new Set(
      fresh.flatMap((mutation) => hub?.candidatesOf(message.tenantId, mutation) ?? []),
    );
    if (candidates.size === 0) return;
    const filters = [...candidates].flatMap(({ subscription: s }) =>
      [s.filter, s.extendedFilter].filter((f) => f !== null),
    );
    store.refreshReads();
    const lookup = await prefetchLookups(store, message.tenantId, fresh.flat(), filters);
    const catalogue = await catalogues.get(message.tenantId);
    const tracked = new Set(catalogue.objects.filter((o) => o.tracked).map((o) => o.name));
    const context = {
      now: Date.now(),
      lookup,
      select: () => [],
      isTracked: (name: string) => tracked.has(name),
    };
    // Matched against the subscriptions held now: one that went meanwhile is skipped by its connection.
    for (const mutation of fresh) {
      const current = hub?.candidatesOf(message.tenantId, mutation) ?? [];
      for (const { subscriber: s, elements } of matchChanges(mutation, current, context))
        for (const element of elements) s.connection.deliver(s.id, element);
    }
  }

  subscriber.on("message", (channel: string, text: string) => {
    const message = decodeLiveMessage(text);
    if (!message || channel !== keys.liveChannel(message.tenantId)) return;
    const previous = chains.get(message.tenantId) ?? Promise.resolve();
    const next = previous
      .then(() => deliver(message))
      .catch((error) =>
        log.warn("live subscription events not sent for a change message", {
          tenantId: message.tenantId,
          ...describeError(error),
        }),
      );
    chains.set(message.tenantId, next);
    void next.then(() => {
      if (chains.get(message.tenantId) === next) chains.delete(message.tenantId);
    });
  });

  return {
    /** The hub whose subscriptions are matched (set once, at assembly). */
    attach(target: LiveHub): void {
      hub = target;
    },
    /**
     * Resolves once the tenant's channel is subscribed and every process knows it is listened to:
     * its changes committed from then on reach this process.
     */
    async watch(tenantId: string): Promise<void> {
      await subscriber.subscribe(keys.liveChannel(tenantId));
      await audience.listen(tenantId);
    },
    unwatch(tenantId: string): void {
      audience.unlisten(tenantId);
      subscriber.unsubscribe(keys.liveChannel(tenantId)).catch(() => undefined);
    },
  };
}
