/**
 * The contract between the change feed's tailer and its consumers: a batch of
 * the change log in, `consume` resolving once the batch is taken care of for
 * good. The webhook consumer is one; live-subscription fan-out and lag metrics
 * are to join it without the tailer changing.
 */
import type { LoggedChange } from "../model/record-values.ts";
import type { StoreWriter } from "../store/store.ts";

/** One batch of the change log: whole mutations (every entry of each), in commit order. */
export interface FeedBatch {
  entries: readonly LoggedChange[];
  /** The same entries by mutation, in commit order; each mutation's entries in their order within it. */
  mutations: readonly (readonly LoggedChange[])[];
  /**
   * Writes, inside the caller's own unit of work, the position earlier batches reached that the tailer has
   * not saved yet (nothing when there is none). A consumer that commits for the batch anyway calls it, so a
   * busy feed commits once per batch, not twice; the tailer saves the position itself otherwise.
   */
  savePositionIn(tx: StoreWriter): Promise<void>;
}

/**
 * A stage the tailer hands every batch to, in order. The tailer moves past a batch only once every
 * consumer's `consume` has resolved, and hands it again to all of them after a failure, a crash or a
 * lease hand-over: a consumer sees a batch at least once, so what it does must bear doing twice.
 */
export interface FeedConsumer {
  /** Named in the log line when it fails. */
  readonly name: string;
  /** Resolves once the batch is taken care of for good; throws to have it handed again. */
  consume(batch: FeedBatch): Promise<void>;
}
