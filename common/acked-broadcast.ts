/**
 * A message to every process subscribed to a Redis channel, answered by each: the sender
 * publishes it under an id and waits until as many answers as Redis says it told have come back
 * on the answer channel, at most `waitMs`. So once `publish` has resolved, every process whose
 * subscription was up and that answered in time has taken the message. Whoever subscribes to the
 * answer channel routes its messages to `answered`; a receiver calls `answer` once it took a message
 * (read with `parseMessage`, as any input). Token revocations and the live audience go this way.
 */
import type { Redis } from "ioredis";
import type { z } from "zod";

/** How a published message was taken: processes told (Redis's count) and those that answered in time. */
export interface Told {
  told: number;
  acknowledged: number;
}

export interface AckedBroadcast {
  /** Publishes `text` (which carries `id`) and waits for the answers. Rejects when Redis is away. */
  publish(id: string, text: string): Promise<Told>;
  /** An answer came on the answer channel. */
  answered(id: string): void;
  /** Answers the message `id`: this process took it. */
  answer(id: string): void;
}

export function createAckedBroadcast(
  publisher: Redis,
  channels: { channel: string; ackChannel: string },
  waitMs: number,
): AckedBroadcast {
  /** Messages published here and waiting for answers, by id. */
  const waiting = new Map<string, { acks: number; told: number; settle: () => void }>();
  return {
    async publish(id, text) {
      let settle = () => {};
      const settled = new Promise<void>((resolve) => {
        settle = resolve;
      });
      // Known before publishing: an answer may come back before Redis's reply does.
      const entry = { acks: 0, told: Number.POSITIVE_INFINITY, settle };
      waiting.set(id, entry);
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        entry.told = await publisher.publish(channels.channel, text);
        if (entry.acks < entry.told)
          await Promise.race([
            settled,
            new Promise<void>((resolve) => {
              timer = setTimeout(resolve, waitMs);
            }),
          ]);
        return { told: entry.told, acknowledged: entry.acks };
      } finally {
        clearTimeout(timer);
        waiting.delete(id);
      }
    },
    answered(id) {
      const entry = waiting.get(id);
      if (entry && ++entry.acks >= entry.told) entry.settle();
    },
    answer(id) {
      publisher.publish(channels.ackChannel, id).catch(() => undefined);
    },
  };
}

/** `text` as a message of `schema`, or null when it is not one: Redis is shared, a message is input like any other. */
export function parseMessage<T>(schema: z.ZodType<T>, text: string): T | null {
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
