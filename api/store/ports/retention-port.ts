/** The retention aggregate of the store port: bounded steps that delete what the logs no longer keep. */

/** Where a delivery stands in the delivery log's age order (oldest first; `id` breaks ties). */
export interface DeliveryAge {
  createdAt: number;
  id: string;
}

/** One step of pruning the delivery log. */
export interface DeliveryPruneStep {
  /** Deliveries deleted, with their attempts. */
  deleted: number;
  /** Where the next step goes on from; null when no delivery created before the cut-off is left to look at. */
  next: DeliveryAge | null;
}

/** Retention steps (inside a unit of work, one step per unit so writers wait one step at most). */
export interface RetentionWriter {
  /**
   * Looks at the next `limit` deliveries created before `before`, oldest first, from `after` on
   * (the start when null), and deletes those finished (`succeeded` or `failed`) and unchanged since
   * `before`, with their attempts. Unfinished ones stay: they are still being delivered.
   */
  pruneDeliveries(before: number, limit: number, after: DeliveryAge | null): Promise<DeliveryPruneStep>;
  /**
   * Deletes at most `limit` of the oldest change-log entries committed before `before` that every
   * change-feed reader (every name with a saved cursor) has passed; returns how many. How it
   * knows what a reader has passed is the engine's business (it made the cursors): with no reader
   * saved, or one saved at the log's start, nothing has been passed. Commit times come from the
   * writers' clocks: an entry older than `before` committed after a newer one waits behind it.
   */
  pruneChanges(before: number, limit: number): Promise<number>;
}
