/**
 * The write loop the flows share: writers (each with the list its committed
 * mutations go to) and a run's count, time and pace in, the run's figures
 * out. An answer that never came is handed to the caller's `resolveLost`,
 * which reads back whether the mutation took effect.
 */
import type { CommittedMutation, StepOutcome, Writer } from "./writer.ts";

export interface WriteRun {
  /** Mutations sent. */
  sent: number;
  acked: number;
  /** Answers that never came, then found committed / not committed by reading back. */
  lostAnswersCommitted: number;
  lostAnswersNotCommitted: number;
  /** Mutations the service refused (GraphQL errors): none expected. */
  rejected: string[];
  /** Round-trip times of acknowledged mutations, ms. */
  roundTrips: number[];
  elapsedMs: number;
}

export interface RunOptions {
  /** Stop after this many mutations in all. */
  count?: number;
  /** Stop after this long. */
  durationMs?: number;
  /** With `durationMs`: keep writing past it until this holds. */
  until?: () => boolean;
  /** Mutations per second across all writers; unpaced when absent. */
  ratePerSecond?: number;
  /** How long to wait for the API to come back after a lost answer. Default 30000. */
  recoveryTimeoutMs?: number;
}

/** A writer and where its committed mutations are kept. */
export interface WritingSlot {
  writer: Writer;
  committed: CommittedMutation[];
}

/** After an unknown outcome: the mutation when it was committed, null when not. */
export type ResolveLost = (
  writer: Writer,
  outcome: Extract<StepOutcome, { kind: "unknown" }>,
  timeoutMs: number,
) => Promise<CommittedMutation | null>;

/** Sends mutations from every slot's writer until the count or time is reached. */
export async function runWriters(
  slots: readonly WritingSlot[],
  run: RunOptions,
  resolveLost: ResolveLost,
): Promise<WriteRun> {
  const result: WriteRun = {
    sent: 0,
    acked: 0,
    lostAnswersCommitted: 0,
    lostAnswersNotCommitted: 0,
    rejected: [],
    roundTrips: [],
    elapsedMs: 0,
  };
  const started = Date.now();
  const deadline = run.durationMs === undefined ? Number.POSITIVE_INFINITY : started + run.durationMs;
  const count = run.count ?? Number.POSITIVE_INFINITY;
  if (count === Number.POSITIVE_INFINITY && deadline === Number.POSITIVE_INFINITY)
    throw new Error("a write run needs a count or a duration");
  let slot = 0;
  const more = () => slot < count && (Date.now() < deadline || (run.until !== undefined && !run.until()));
  const writerLoop = async ({ writer, committed }: WritingSlot) => {
    while (more()) {
      const mine = slot++;
      if (run.ratePerSecond) {
        const due = started + (mine * 1000) / run.ratePerSecond;
        if (due > Date.now()) await Bun.sleep(due - Date.now());
      }
      result.sent++;
      const outcome = await writer.step();
      if (outcome.kind === "acked") {
        result.acked++;
        committed.push(outcome.mutation);
        result.roundTrips.push((outcome.mutation.ackedAt as number) - outcome.mutation.sentAt);
      } else if (outcome.kind === "rejected") result.rejected.push(outcome.message);
      else {
        const found = await resolveLost(writer, outcome, run.recoveryTimeoutMs ?? 30_000);
        if (found) {
          result.lostAnswersCommitted++;
          committed.push(found);
        } else result.lostAnswersNotCommitted++;
      }
    }
  };
  await Promise.all(slots.map(writerLoop));
  result.elapsedMs = Date.now() - started;
  return result;
}
