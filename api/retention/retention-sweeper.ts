/**
 * Retention: keeps the delivery log and the change log from growing without
 * bound. Once at start and then every `everyMs`, deletes the finished
 * deliveries (with their attempts) unchanged for longer than the delivery-log
 * retention, and the change-log entries the change feed passed that are older
 * than the change-log retention. It deletes a bounded step per unit of work and
 * lets the event loop run between steps, so requests and the feed's commits
 * wait for one step at most. Several API processes may sweep one store: a step
 * deletes only what is still there.
 */
import { describeError, type Logger } from "../../common/log.ts";
import type { DeliveryAge, DeliveryPruneStep, Store } from "../store/store.ts";

export interface RetentionRules {
  /** How long a finished delivery stays after its last change, ms. */
  deliveryLogMs: number;
  /** How long a change-log entry stays after its commit, once the feed has passed it, ms. */
  changeLogMs: number;
}

export interface RetentionSweeperDeps {
  store: Store;
  log: Logger;
  rules: RetentionRules;
  /** Time between the end of one sweep and the start of the next, ms. */
  everyMs: number;
  /** Rows looked at (deliveries) or deleted (change log) per unit of work. */
  stepSize?: number;
  now?: () => number;
}

/** What one sweep deleted. */
export interface SweepResult {
  deliveries: number;
  changes: number;
}

/** A step deletes in a few milliseconds: requests arriving meanwhile wait no longer than that. */
const STEP_SIZE = 200;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createRetentionSweeper(deps: RetentionSweeperDeps) {
  const { store, log, rules, everyMs, stepSize = STEP_SIZE, now = Date.now } = deps;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let sweeping: Promise<unknown> | null = null;

  async function pruneDeliveries(before: number): Promise<number> {
    let deleted = 0;
    let after: DeliveryAge | null = null;
    do {
      const from: DeliveryAge | null = after;
      const step: DeliveryPruneStep = await store.unitOfWork((tx) =>
        tx.pruneDeliveries(before, stepSize, from),
      );
      deleted += step.deleted;
      after = step.next;
      await nextTurn();
    } while (after !== null && !stopped);
    return deleted;
  }

  async function pruneChanges(before: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      const step = await store.unitOfWork((tx) => tx.pruneChanges(before, stepSize));
      deleted += step;
      await nextTurn();
      if (step < stepSize || stopped) return deleted;
    }
  }

  /** Deletes what the retentions let go as of now. */
  async function sweep(): Promise<SweepResult> {
    const at = now();
    const deliveries = await pruneDeliveries(at - rules.deliveryLogMs);
    const changes = await pruneChanges(at - rules.changeLogMs);
    if (deliveries + changes > 0) log.info("retention sweep deleted old log rows", { deliveries, changes });
    return { deliveries, changes };
  }

  const run = () => {
    sweeping = sweep()
      .catch((error) => log.warn("retention sweep failed; retried at the next", describeError(error)))
      .finally(() => {
        sweeping = null;
        if (!stopped) timer = setTimeout(run, everyMs);
      });
  };

  return {
    sweep,
    /** Sweeps now, then every `everyMs`. */
    start(): void {
      if (!stopped && !sweeping && !timer) run();
    },
    /** Stops sweeping; resolves once a sweep under way has finished its step. */
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await sweeping;
    },
  };
}
