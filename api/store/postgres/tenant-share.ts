/**
 * Each tenant's share of the pool: record reads (the statements a client
 * shapes, by its filters, sizes and order) of one tenant run at most `share`
 * at a time on this process; the next wait their turn in order. Without it, a
 * tenant's slow reads (each up to the statement time limit) took every pooled
 * connection, and every other tenant's queries and mutations waited behind
 * them. Units of work are not counted: they hold a connection of their own,
 * their statements are keyed lookups and writes, and one waiting here while
 * holding its connection could wait for itself.
 */
import { UnavailableError } from "../../../common/errors.ts";

export interface TenantShareOptions {
  /** Record reads of one tenant under way at once, ≥ 1. */
  share: number;
  /** Longest wait for a turn, ms (0: no bound); then UnavailableError. */
  maxWaitMs: number;
  /** Most reads of one tenant waiting at once; the next is refused at once with UnavailableError. */
  maxWaiting: number;
}

export interface TenantShare {
  /**
   * Runs `read` within `tenantId`'s share: at once while fewer than `share` of its reads run, else
   * after those before it.
   * @throws UnavailableError when `maxWaiting` of the tenant's reads wait already, or this one waited
   * `maxWaitMs` without its turn (nothing of it ran).
   */
  run<T>(tenantId: string, read: () => Promise<T>): Promise<T>;
}

interface Turns {
  running: number;
  /** Waiting reads, first come first: each is called with its turn. */
  waiting: (() => void)[];
}

export function createTenantShare(options: TenantShareOptions): TenantShare {
  const share = Math.max(1, Math.floor(options.share));
  const tenants = new Map<string, Turns>();

  const busy = () =>
    new UnavailableError(
      `this tenant has ${share} store reads under way and more waiting on this process (its share of the store's connections); try again shortly`,
    );

  /** Resolves once a turn is the tenant's (counted as running), or rejects after maxWaitMs. */
  const turn = (turns: Turns): Promise<void> => {
    if (turns.running < share) {
      turns.running++;
      return Promise.resolve();
    }
    if (turns.waiting.length >= options.maxWaiting) return Promise.reject(busy());
    return new Promise<void>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const go = () => {
        clearTimeout(timer);
        turns.running++;
        resolve();
      };
      turns.waiting.push(go);
      if (options.maxWaitMs > 0)
        timer = setTimeout(() => {
          const at = turns.waiting.indexOf(go);
          if (at >= 0) turns.waiting.splice(at, 1);
          reject(busy());
        }, options.maxWaitMs);
    });
  };

  const done = (tenantId: string, turns: Turns) => {
    turns.running--;
    const next = turns.waiting.shift();
    if (next) next();
    else if (turns.running === 0) tenants.delete(tenantId);
  };

  return {
    async run(tenantId, read) {
      let turns = tenants.get(tenantId);
      if (!turns) {
        turns = { running: 0, waiting: [] };
        tenants.set(tenantId, turns);
      }
      await turn(turns);
      try {
        return await read();
      } finally {
        done(tenantId, turns);
      }
    },
  };
}
