/**
 * One read of the change feed, answered: the machine (feed-machine.ts)
 * stepped from the read, each action that reaches outside carried out by the
 * caller's `perform` (the driver shell, change-stream-feed.ts; a scripted
 * stream in the tests), its answer fed back, until the machine hands entries
 * or fails the read. The loop both use, so the tests drive the shell's.
 */
import type { FeedAction, FeedEvent, PositionedEntry } from "./feed-events.ts";
import { type FeedState, step } from "./feed-machine.ts";

/** The actions that reach outside the machine (the rest, hand and fail, end a read). */
export type OutsideAction = Exclude<FeedAction, { type: "hand" } | { type: "fail" }>;

/**
 * Answers one read: steps the machine from `first`, has `perform` carry out each action that
 * reaches outside (its answer, or what it threw as a `failed` event, is the next event; null for
 * none), until the machine hands entries or fails the read. `holder.state` follows every step.
 * @throws what the machine fails the read with.
 */
export async function answerRead(
  holder: { state: FeedState },
  first: FeedEvent,
  perform: (action: OutsideAction) => Promise<FeedEvent | null> | FeedEvent | null,
): Promise<PositionedEntry[]> {
  let event: FeedEvent | null = first;
  while (event) {
    const transition = step(holder.state, event);
    holder.state = transition.state;
    event = null;
    for (const action of transition.actions) {
      if (action.type === "hand") return action.entries;
      if (action.type === "fail") throw action.error;
      try {
        event = await perform(action);
      } catch (error) {
        event = { type: "failed", error };
      }
      if (event) break;
    }
  }
  throw new Error("the change feed's machine stopped without answering the read");
}
