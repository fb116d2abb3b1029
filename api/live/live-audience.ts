/**
 * Which tenants some API process listens to (holds a live socket of), known in every process, so
 * the change feed publishes a tenant's changes only when someone will hear them, without asking
 * Redis for each batch (a question per batch cost as much as the message it spared: at 1,000
 * mutations/s, one batch each, ~70 µs of the API's CPU per mutation).
 *
 * A process that starts listening to a tenant announces it on Redis and waits until every process
 * told has answered (at most `ackWaitMs`): once `listen` has resolved, a change committed after is
 * published, whichever process reads it. Listeners announce their tenants again every
 * `refreshMs`; a tenant not announced for three of those is taken as unheard (one whose last
 * listener went costs its messages until then).
 *
 * A process that just subscribed (or whose subscription came back) calls the roll: every process
 * announces its tenants and then answers, on the one connection, so the announcement arrives
 * first. Until all have answered it takes every tenant as heard; when one did not answer in time,
 * for a whole round of refreshes.
 */
import type { Redis } from "ioredis";
import { z } from "zod";
import { createAckedBroadcast, parseMessage } from "../../common/acked-broadcast.ts";

export interface LiveAudienceDeps {
  /** Publishes announcements and answers (any connection not in subscriber mode). */
  publisher: Redis;
  /** A connection in subscriber mode (it may carry other channels too). */
  subscriber: Redis;
  /** Where announcements go. */
  channel: string;
  /** Where each process answers that it took an announcement. */
  ackChannel: string;
  /** How often a listening process announces its tenants again, ms. Default 10,000. */
  refreshMs?: number;
  /** Longest `listen` waits for the processes' answers, ms. Default 500. */
  ackWaitMs?: number;
  now?: () => number;
}

export interface LiveAudience {
  /** The tenants among `tenantIds` that some process may be listening to now. */
  heard(tenantIds: readonly string[]): ReadonlySet<string>;
  /** This process listens to `tenantId`: resolves once every process told knows (or `ackWaitMs` passed). */
  listen(tenantId: string): Promise<void>;
  /** This process no longer listens to `tenantId` (the others forget it within three refreshes). */
  unlisten(tenantId: string): void;
  /** Subscribes to both channels, calls the roll and starts announcing; resolves once the roll is answered. */
  start(): Promise<void>;
  stop(): void;
}

/**
 * What a message carries, checked as it arrives: Redis is shared, a message is input like any other.
 * An announcement names tenants; a roll call asks every process for its own.
 */
const AnnouncementSchema = z.object({
  id: z.string().min(1),
  tenants: z.array(z.string().min(1)).max(100_000).optional(),
  rollCall: z.literal(true).optional(),
});

/** Lease of an announced tenant, in refresh periods: two refreshes may be missed. */
const LEASE_REFRESHES = 3;

export function createLiveAudience(deps: LiveAudienceDeps): LiveAudience {
  const { publisher, subscriber, channel, ackChannel, now = Date.now } = deps;
  const refreshMs = deps.refreshMs ?? 10_000;
  const ackWaitMs = deps.ackWaitMs ?? 500;
  /** Tenants some process announced, and when that lapses. */
  const heardUntil = new Map<string, number>();
  /** The tenants this process listens to. */
  const mine = new Set<string>();
  /** Until when every tenant counts as heard: the roll call is under way, or some process did not answer it. */
  let unsureUntil = Number.POSITIVE_INFINITY;
  let refresher: ReturnType<typeof setInterval> | null = null;
  let started = false;
  const broadcast = createAckedBroadcast(publisher, { channel, ackChannel }, ackWaitMs);

  const announce = (tenants: string[]) => {
    const id = crypto.randomUUID();
    return broadcast.publish(id, JSON.stringify({ id, tenants }));
  };
  /** Says again what this process listens to; nobody waits on it (Redis away: the next refresh says it). */
  const announceMine = () => {
    if (mine.size > 0) announce([...mine]).catch(() => undefined);
  };

  /** Asks every process for its tenants; sure of what it heard once all answered in time. */
  const callTheRoll = async () => {
    unsureUntil = Number.POSITIVE_INFINITY;
    const id = crypto.randomUUID();
    try {
      const { told, acknowledged } = await broadcast.publish(id, JSON.stringify({ id, rollCall: true }));
      unsureUntil = acknowledged >= told ? now() : now() + refreshMs + ackWaitMs;
    } catch {
      // Redis away: the next "ready" calls again.
      unsureUntil = now() + refreshMs + ackWaitMs;
    }
  };

  subscriber.on("message", (from: string, text: string) => {
    if (from === ackChannel) return broadcast.answered(text);
    if (from !== channel) return;
    const message = parseMessage(AnnouncementSchema, text);
    if (!message) return;
    const until = now() + LEASE_REFRESHES * refreshMs;
    for (const tenantId of message.tenants ?? []) heardUntil.set(tenantId, until);
    // Published before the answer, on the same connection: the caller hears it before it counts the answer.
    if (message.rollCall) announceMine();
    broadcast.answer(message.id);
  });
  // ioredis subscribes again by itself after a reconnect and says "ready" once it is back: what was
  // announced meanwhile is gone, so call the roll again, and say what this process listens to.
  subscriber.on("ready", () => {
    if (!started) return;
    void callTheRoll();
    announceMine();
  });

  const forgetLapsed = () => {
    const at = now();
    for (const [tenantId, until] of heardUntil) if (until <= at) heardUntil.delete(tenantId);
  };

  return {
    heard(tenantIds) {
      const at = now();
      if (at < unsureUntil) return new Set(tenantIds);
      return new Set(tenantIds.filter((tenantId) => (heardUntil.get(tenantId) ?? 0) > at));
    },
    async listen(tenantId) {
      mine.add(tenantId);
      heardUntil.set(tenantId, now() + LEASE_REFRESHES * refreshMs);
      // Redis away: nothing is published to anyone meanwhile; the next refresh announces it.
      await announce([tenantId]).catch(() => undefined);
    },
    unlisten(tenantId) {
      mine.delete(tenantId);
    },
    async start() {
      await subscriber.subscribe(channel, ackChannel);
      started = true;
      await callTheRoll();
      refresher ??= setInterval(() => {
        forgetLapsed();
        announceMine();
      }, refreshMs);
      refresher.unref();
    },
    stop() {
      if (refresher !== null) clearInterval(refresher);
      refresher = null;
    },
  };
}
