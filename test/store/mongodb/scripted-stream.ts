/**
 * THE ONE ALLOWED STAND-IN for MongoDB in these tests, stated plainly: no
 * MongoDB server can run on this machine (docs/mongodb-layout.md), so the
 * change feed's machine (api/store/mongodb/feed/feed-machine.ts) is driven
 * here by a SCRIPT — literal arrays of what each opening of the change
 * stream yields, pull by pull (events, or the driver's real error objects
 * from the `mongodb` package), and literal answers to the outbox scan —
 * instead of a server. Nothing here simulates a server's behaviour: the
 * script says what comes, and the runner checks that the machine asked for
 * what the script expects (where to open, what to scan) before answering.
 * The driver-backed shell (change-stream-feed.ts) is exercised only where a
 * replica set is reachable (MONGODB_TEST_URL).
 */
import { expect } from "bun:test";
import { MongoServerError } from "mongodb";
import type { ChangeEntry } from "../../../api/model/record-values.ts";
import { answerRead, type OutsideAction } from "../../../api/store/mongodb/feed/answer-read.ts";
import type {
  FeedAction,
  FeedEvent,
  OutboxDocument,
  PositionedEntry,
  ScanKey,
  ScanRequest,
  StreamEvent,
} from "../../../api/store/mongodb/feed/feed-events.ts";
import { CLOSED, type FeedState, step } from "../../../api/store/mongodb/feed/feed-machine.ts";
import type {
  ClusterTime,
  FeedPosition,
  ResumePoint,
} from "../../../api/store/mongodb/feed/feed-position.ts";

/** One opening of the stream: where the machine must open it, and what each pull then yields. */
export interface Opening {
  expect: ResumePoint;
  pulls: (readonly StreamEvent[] | Error)[];
}

/** One page of the outbox scan: what the machine must ask, and the answer. */
export interface ScanAnswer {
  expect: { origin: FeedPosition | null; from: ScanKey | null; readAt: ClusterTime | null };
  answer: { docs: readonly OutboxDocument[]; readAt: ClusterTime; next: ScanKey | null } | Error;
}

export interface Script {
  openings: Opening[];
  scans?: ScanAnswer[];
  /** Errors the stamp writes fail with, in turn (none: they succeed). */
  stampFailures?: Error[];
}

export const time = (t: number, i = 1): ClusterTime => ({ t, i });

/** A change entry named by its mutation and index (the uid tells entries apart in assertions). */
export const entry = (name: string): ChangeEntry => ({
  tenantId: "tenant-a",
  objectName: "Things",
  operation: "INSERT",
  uid: name,
  before: null,
  after: { Name: name },
  mutationId: name.split("/")[0] ?? name,
  sequence: Number(name.split("/")[1] ?? 0),
  committedAt: 1_700_000_000_000,
});

/** A change entry of mutation `mutationId`, its `sequence`-th, committed at `committedAt` (ms). */
export const entryAt = (mutationId: string, sequence: number, committedAt: number): ChangeEntry => ({
  tenantId: "ta",
  objectName: "Job",
  operation: "INSERT",
  uid: `u-${mutationId}-${sequence}`,
  before: null,
  after: null,
  mutationId,
  sequence,
  committedAt,
});

/** The server's write conflict (112, labelled TransientTransactionError), as the driver raises it. */
export const writeConflict = () =>
  new MongoServerError({
    message: "WriteConflict error: this operation conflicted with another operation (scripted)",
    code: 112,
    codeName: "WriteConflict",
    errorLabels: ["TransientTransactionError"],
  });

/**
 * An outbox document `id` (24 hex digits made from a number) holding entries `<id>/0` … `<id>/<n-1>`;
 * its writer had seen second `id` (its `lb`), below any commit time the scripts give it.
 */
export function outboxDoc(id: number, n: number, ct: ClusterTime | null = null): OutboxDocument {
  const hex = id.toString(16).padStart(24, "0");
  return {
    id: hex,
    entries: Array.from({ length: n }, (_, k) => entry(`d${id}/${k}`)),
    lb: time(id, 0),
    ct,
    from: 0,
  };
}

/** The stream's event for document `id` (n entries) committed at second `t`; its token is derived from both. */
export const insertEvent = (
  id: number,
  n: number,
  t: number,
  ct: ClusterTime | null = null,
): StreamEvent => ({
  token: `82${t.toString(16).padStart(8, "0")}${id.toString(16).padStart(4, "0")}`,
  ts: time(t),
  doc: outboxDoc(id, n, ct),
});

/** The runner over a script: the machine stepped as the shell steps it, I/O answered from the script. */
export function scripted(script: Script) {
  const holder: { state: FeedState } = { state: CLOSED };
  const openings = [...script.openings];
  const scans = [...(script.scans ?? [])];
  const stampFailures = [...(script.stampFailures ?? [])];
  let pulls: Opening["pulls"] | null = null;
  /** Every action the machine asked for, in order. */
  const actions: FeedAction[] = [];
  /** The documents stamped, with the time they were stamped with. */
  const stamps: { id: string; ct: ClusterTime }[] = [];

  /** Answers an action from the script (the hand and fail actions end the read in answerRead). */
  const perform = (action: OutsideAction): FeedEvent | null => {
    actions.push(action);
    switch (action.type) {
      case "close":
        pulls = null;
        return null;
      case "open": {
        const next = openings.shift();
        if (!next) throw new Error(`the script has no more openings (asked: ${JSON.stringify(action.from)})`);
        expect(action.from).toEqual(next.expect);
        pulls = [...next.pulls];
        return { type: "opened" };
      }
      case "pull": {
        if (pulls === null) throw new Error("a pull on a closed stream");
        const answer = pulls.shift() ?? [];
        if (answer instanceof Error) throw answer;
        return { type: "received", events: answer };
      }
      case "stamp": {
        const failure = stampFailures.shift();
        if (failure) throw failure;
        stamps.push(...action.docs);
        return { type: "stamped" };
      }
      case "scan": {
        const next = scans.shift();
        if (!next)
          throw new Error(`the script has no more scan pages (asked: ${JSON.stringify(action.request)})`);
        expect(action.request).toEqual(next.expect as ScanRequest);
        if (next.answer instanceof Error) throw next.answer;
        return { type: "scanned", ...next.answer };
      }
    }
  };

  /** Answers a read as the shell does (answerRead), recording the hand and fail actions too. */
  const run = async (first: FeedEvent): Promise<PositionedEntry[]> => {
    try {
      const handed = await answerRead(holder, first, perform);
      actions.push({ type: "hand", entries: handed });
      return handed;
    } catch (error) {
      actions.push({ type: "fail", error });
      throw error;
    }
  };

  return {
    /** A read after `after`: the entries handed, or the error the read failed with (thrown). */
    read: (after: FeedPosition | null, limit = 100) => run({ type: "read", after, limit }),
    /** An event from outside a read (the reader gone). */
    tell(event: FeedEvent) {
      const transition = step(holder.state, event);
      holder.state = transition.state;
      for (const action of transition.actions) if (action.type === "close") perform(action);
    },
    state: () => holder.state,
    actions,
    stamps,
    /** True when every scripted opening and scan page was used. */
    finished: () => openings.length === 0 && scans.length === 0,
  };
}

/** The entries' names (their uids), to compare with what a script committed. */
export const names = (handed: readonly PositionedEntry[]) => handed.map((e) => e.entry.uid);
