/**
 * Every Redis key and queue name the service uses, in one place. All keys live
 * under a configurable prefix so several deployments (or tests) share one Redis.
 */

/** The BullMQ queue holding delivery jobs (api enqueues, dispatcher consumes). */
export const DELIVERY_QUEUE = "deliveries";

/**
 * The BullMQ queue of webhook events that are not mutations: schedule ticks (job schedulers) and
 * deferred firings (delayed jobs). The API enqueues and consumes them.
 */
export const WEBHOOK_EVENT_QUEUE = "webhook-events";

/** Builds the key names for one prefix. */
export function redisKeys(prefix: string) {
  return {
    /** BullMQ's own prefix for its queues. */
    bullPrefix: `${prefix}:bull`,
    /** Health probe key (written and read back by health checks). */
    health: `${prefix}:health`,
    /**
     * The lease of one partition of the change log, held by the API process reading it; its value
     * names the process (`<host>:<pid>:<random>`).
     */
    feedLease: (partition: number) => `${prefix}:feed:lease:${partition}`,
    /** The live API processes' heartbeats (a sorted set: process → when its heartbeat lapses). */
    feedMembers: `${prefix}:feed:members`,
    /**
     * Pub/sub channel on which every API process says which partitions it committed to: wakes their
     * readers wherever they run.
     */
    feedCommits: `${prefix}:feed:commits`,
    /** Pub/sub channel on which an API process tells the others of a token it revoked (they drop its cached lookup). */
    tokenRevocations: `${prefix}:auth:revocations`,
    /** Pub/sub channel on which each API process answers that it dropped a revoked token's lookup. */
    tokenRevocationAcks: `${prefix}:auth:revocation-acks`,
    /** Prefix of the per-endpoint (host:port) delivery leases shared by all dispatchers. */
    endpointLeases: `${prefix}:endpoint-leases`,
    /**
     * The request-rate bucket of one API token. Tagged with the tenant (`{…}`), so a token's and
     * its tenant's buckets share a Redis Cluster slot and one script can take from both.
     */
    tokenRateBucket: (tenantId: string, tokenId: string) => `${prefix}:rate:{${tenantId}}:token:${tokenId}`,
    /**
     * The pub/sub channel of one tenant's committed changes, for live subscriptions: one per
     * tenant, so Redis sends a process only the tenants whose sockets it holds.
     */
    liveChannel: (tenantId: string) => `${prefix}:live:${tenantId}`,
    /** Where API processes announce the tenants they listen to live (api/live/live-audience.ts). */
    liveAudience: `${prefix}:live-audience`,
    /** Where each process answers that it took an announcement. */
    liveAudienceAcks: `${prefix}:live-audience:acks`,
    /** The request-rate bucket of one tenant (all its tokens together). */
    tenantRateBucket: (tenantId: string) => `${prefix}:rate:{${tenantId}}:tenant`,
  } as const;
}

export type RedisKeys = ReturnType<typeof redisKeys>;
