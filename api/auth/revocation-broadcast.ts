/**
 * Token revocations told to every API process: a revocation made on one is published on Redis;
 * each process drops its cached lookup of the token as the message arrives and answers that it
 * did; the revoking process waits for those answers (as many as Redis says it told, at most
 * `ackWaitMs`) before its revocation returns. So once a revocation has returned, every process
 * whose subscription was up refuses the token: a message alone would not do, as a process may take
 * a request sent after the revocation returned before it reads the message (measured: 2–3 in 100
 * on an idle machine). A hint, not the guarantee: a process whose subscription is away, or that is
 * too busy to answer in time, learns of it from the store's revocation version, read at least
 * every TOKEN_REVOCATION_CHECK_MS (auth-service.ts); and a subscription that comes back drops
 * every cached lookup, since what was published meanwhile is gone.
 */
import type { Redis } from "ioredis";
import { z } from "zod";
import { createAckedBroadcast, parseMessage, type Told } from "../../common/acked-broadcast.ts";

export interface RevocationBroadcastDeps {
  /** Publishes revocations and answers (any connection not in subscriber mode). */
  publisher: Redis;
  /** A connection in subscriber mode (it may carry other channels too). */
  subscriber: Redis;
  /** Where revocations are published. */
  channel: string;
  /** Where each process answers that it dropped a revoked token. */
  ackChannel: string;
  /** A token revoked by some process (this one's own messages come back too: dropping twice is harmless). */
  onRevoked(tenantId: string, jti: string): void;
  /** The subscription is (back) in place: anything published while it was away was not heard. */
  onSubscribed(): void;
  /** Longest a revocation waits for the processes' answers, in ms. Default 500. */
  ackWaitMs?: number;
}

/** How a published revocation was taken: processes told (Redis's count) and those that answered in time. */
export type RevocationTold = Told;

/** What a revocation message carries, checked as it arrives: Redis is shared, a message is input like any other. */
const RevocationMessageSchema = z.object({
  id: z.string().min(1),
  tenantId: z.string().min(1),
  jti: z.string().min(1),
});

/**
 * @returns `publish` (rejects when Redis is away: the caller decides what that costs) and `start()`,
 * which subscribes to both channels (resolves once subscribed).
 */
export function createRevocationBroadcast(deps: RevocationBroadcastDeps) {
  const { subscriber, channel, ackChannel, ackWaitMs = 500 } = deps;
  const broadcast = createAckedBroadcast(deps.publisher, { channel, ackChannel }, ackWaitMs);

  subscriber.on("message", (from: string, text: string) => {
    if (from === ackChannel) return broadcast.answered(text);
    if (from !== channel) return;
    const message = parseMessage(RevocationMessageSchema, text);
    if (!message) return;
    deps.onRevoked(message.tenantId, message.jti);
    // Answered once dropped: the revoking process returns only then.
    broadcast.answer(message.id);
  });
  // ioredis subscribes again by itself after a reconnect and says "ready" once it is back.
  subscriber.on("ready", () => deps.onSubscribed());

  return {
    /** Publishes a revocation and waits for every process told to answer (at most `ackWaitMs`). */
    publish(tenantId: string, jti: string): Promise<RevocationTold> {
      const id = crypto.randomUUID();
      return broadcast.publish(id, JSON.stringify({ id, tenantId, jti }));
    },
    start: async (): Promise<void> => {
      await subscriber.subscribe(channel, ackChannel);
    },
  };
}
