/**
 * The retention aggregate of the store port: bounded steps that delete what the logs no longer
 * keep. The delivery log's step is declared with the log's contract (common/delivery-log/).
 */
import type { DeliveryLogRetention } from "../../../common/delivery-log/delivery-log.ts";

export type { DeliveryAge, DeliveryPruneStep } from "../../../common/delivery-log/delivery-log.ts";

/** Retention steps (inside a unit of work, one step per unit so writers wait one step at most). */
export interface RetentionWriter extends DeliveryLogRetention {
  /**
   * Deletes at most `limit` of the oldest change-log entries committed before `before` that every
   * change-feed reader (every name with a saved cursor) has passed; returns how many. How it
   * knows what a reader has passed is the engine's business (it made the cursors): with no reader
   * saved, or one saved at the log's start, nothing has been passed. Commit times come from the
   * writers' clocks: an entry older than `before` committed after a newer one waits behind it.
   */
  pruneChanges(before: number, limit: number): Promise<number>;
}
