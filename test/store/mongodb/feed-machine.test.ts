/**
 * The MongoDB change feed's state machine (api/store/mongodb/feed/feed-machine.ts), driven by
 * SCRIPTED change streams: the one stand-in for MongoDB these tests allow, because no MongoDB
 * server can run on this machine (see scripted-stream.ts). The errors in the scripts are the
 * driver's own classes from the `mongodb` package, with the server's codes and labels.
 */
import { describe, expect, test } from "bun:test";
import { MongoNetworkError, MongoServerError } from "mongodb";
import { MAX_FAILURES, step } from "../../../api/store/mongodb/feed/feed-machine.ts";
import type { FeedPosition, StreamPosition } from "../../../api/store/mongodb/feed/feed-position.ts";
import { compareTimes } from "../../../api/store/mongodb/feed/feed-position.ts";
import { insertEvent, names, outboxDoc, scripted, time } from "./scripted-stream.ts";

const serverError = (code: number, codeName: string, errorLabels: string[] = []) =>
  new MongoServerError({ message: `${codeName} (scripted)`, code, codeName, errorLabels });
const resumableLabelled = () =>
  serverError(11602, "InterruptedDueToReplStateChange", ["ResumableChangeStreamError"]);
const network = () => new MongoNetworkError("connection reset by peer (scripted)");
const cursorNotFound = () => serverError(43, "CursorNotFound");
const historyLost = () => serverError(286, "ChangeStreamHistoryLost");
const invalidToken = () => serverError(260, "InvalidResumeToken");
const unauthorized = () => serverError(13, "Unauthorized");

// Outbox documents 1…6 as the stream shows them: document n (1 or 2 entries) committed at second 9 + n.
const ev1 = insertEvent(1, 2, 10);
const ev2 = insertEvent(2, 1, 11);
const ev3 = insertEvent(3, 1, 12);
const ev5 = insertEvent(5, 1, 14);
const ev6 = insertEvent(6, 1, 15);

/** The reader's saved position: past document 1, all of it. */
const saved: StreamPosition = { kind: "stream", ts: time(10), k: 1, last: true, token: ev1.token };
const after = (handed: { position: FeedPosition }[]) => handed.at(-1)?.position ?? null;

describe("the change feed's machine, on scripted streams", () => {
  test("after a restart it resumes after the saved token; an entry shown again is dropped, the rest handed and stamped first", async () => {
    const feed = scripted({ openings: [{ expect: { startAfter: ev1.token }, pulls: [[ev1, ev2], []] }] });
    const first = await feed.read(saved);
    expect(names(first)).toEqual(["d2/0"]);
    expect(feed.stamps).toEqual([{ id: ev2.doc.id, ct: time(11) }]);
    // Stamped before handed: the stamp comes first among the actions.
    const kinds = feed.actions.map((a) => a.type);
    expect(kinds.indexOf("stamp")).toBeLessThan(kinds.indexOf("hand"));
    expect(await feed.read(after(first))).toEqual([]);
    expect(feed.finished()).toBe(true);
  });

  test("from part-way through a document it reopens at the commit time and hands what is left of it", async () => {
    const partWay: StreamPosition = { ...saved, k: 0, last: false };
    const feed = scripted({
      openings: [{ expect: { startAtOperationTime: time(10) }, pulls: [[ev1, ev2]] }],
    });
    const handed = await feed.read(partWay);
    expect(names(handed)).toEqual(["d1/1", "d2/0"]);
    expect(handed[0]?.position).toMatchObject({ kind: "stream", ts: time(10), k: 1, last: true });
  });

  test("resumable errors (labelled, network, lost cursor) reopen after the last event received; nothing is handed twice", async () => {
    const feed = scripted({
      openings: [
        { expect: { startAfter: ev1.token }, pulls: [network()] },
        { expect: { startAfter: ev1.token }, pulls: [[ev1, ev2], resumableLabelled()] },
        { expect: { startAfter: ev2.token }, pulls: [[ev2, ev3], cursorNotFound()] },
        { expect: { startAfter: ev3.token }, pulls: [[ev3], []] },
      ],
    });
    const handed = [];
    let position: FeedPosition | null = saved;
    for (let read = 0; read < 4; read++) {
      const got = await feed.read(position);
      handed.push(...got);
      position = after(got) ?? position;
    }
    expect(names(handed)).toEqual(["d2/0", "d3/0"]);
    const times = handed.map((e) => (e.position as StreamPosition).ts);
    for (let i = 1; i < times.length; i++)
      expect(compareTimes(times[i - 1] ?? time(0), times[i] ?? time(0))).toBeLessThan(0);
    expect(feed.finished()).toBe(true);
  });

  test(`more than ${MAX_FAILURES} resumable failures in a row fail the read; the next read starts over from the reader's position`, async () => {
    const failing = Array.from({ length: MAX_FAILURES + 1 }, () => ({
      expect: { startAfter: ev1.token },
      pulls: [network()],
    }));
    const feed = scripted({
      openings: [...failing, { expect: { startAfter: ev1.token }, pulls: [[ev2]] }],
    });
    await expect(feed.read(saved)).rejects.toThrow(MongoNetworkError);
    expect(feed.state().phase).toBe("closed");
    expect(feed.actions.filter((a) => a.type === "open")).toHaveLength(MAX_FAILURES + 1);
    expect(names(await feed.read(saved))).toEqual(["d2/0"]);
  });

  test("a fatal error fails the read at once and keeps nothing; the next read reopens from the reader's position", async () => {
    const feed = scripted({
      openings: [
        { expect: { startAfter: ev1.token }, pulls: [[ev2, ev3], unauthorized()] },
        { expect: { startAfter: ev3.token }, pulls: [[ev5]] },
      ],
    });
    const one = await feed.read(saved, 1);
    expect(names(one)).toEqual(["d2/0"]);
    // The rest of the pull is held: the next read is served without the stream.
    const two = await feed.read(after(one), 1);
    expect(names(two)).toEqual(["d3/0"]);
    expect(feed.actions.filter((a) => a.type === "pull")).toHaveLength(1);
    await expect(feed.read(after(two))).rejects.toThrow(MongoServerError);
    expect(feed.state().phase).toBe("closed");
    expect(names(await feed.read(after(two)))).toEqual(["d5/0"]);
  });

  for (const [name, lost] of [
    ["ChangeStreamHistoryLost (286: the oplog rolled past the token)", historyLost],
    ["InvalidResumeToken (260)", invalidToken],
  ] as const)
    test(`${name}: the outbox is scanned from the reader's position, then the stream reopened at the scan's time`, async () => {
      const feed = scripted({
        openings: [
          { expect: { startAfter: ev1.token }, pulls: [lost()] },
          {
            expect: { startAtOperationTime: time(20) },
            pulls: [[insertEvent(3, 2, 12), insertEvent(4, 1, 21)]],
          },
        ],
        scans: [
          {
            expect: { origin: saved, from: null, readAt: null },
            answer: {
              // Document 1 holds the saved position (stamped by the reader that read it): nothing of it again.
              docs: [outboxDoc(1, 2, time(10)), outboxDoc(2, 1, time(11)), outboxDoc(3, 2, null)],
              readAt: time(20),
              next: null,
            },
          },
        ],
      });
      const scannedEntries = await feed.read(saved);
      expect(names(scannedEntries)).toEqual(["d2/0", "d3/0", "d3/1"]);
      // Each at its document's key in the stamp order: a stamp it read, or the read time it stamps with.
      const key = (id: number, ct: ReturnType<typeof time>) => ({
        kind: "scan",
        ct,
        lb: time(id, 0),
        doc: outboxDoc(id, 1).id,
      });
      expect(scannedEntries.map((e) => e.position)).toEqual([
        { ...key(2, time(11)), k: 0, last: true },
        { ...key(3, time(20)), k: 0, last: false },
        { ...key(3, time(20)), k: 1, last: true },
      ] as FeedPosition[]);
      // Only the document no reader had stamped, with the scan's read time (its commit is at or before it).
      expect(feed.stamps).toEqual([{ id: outboxDoc(3, 1).id, ct: time(20) }]);
      const kinds = feed.actions.map((a) => a.type);
      expect(kinds.slice(0, 4)).toEqual(["open", "pull", "close", "scan"]);
      // The reopened stream shows document 3 again (at the scan's time or before): dropped; document 4 is new.
      expect(names(await feed.read(after(scannedEntries)))).toEqual(["d4/0"]);
      expect(feed.finished()).toBe(true);
    });

  test("from the log's start the outbox is scanned page by page at one snapshot, then the stream opens at its time", async () => {
    const feed = scripted({
      openings: [{ expect: { startAtOperationTime: time(30) }, pulls: [[]] }],
      scans: [
        {
          expect: { origin: null, from: null, readAt: null },
          answer: {
            docs: [outboxDoc(1, 1, time(5)), outboxDoc(2, 1, null)],
            readAt: time(30),
            next: { page: 2 },
          },
        },
        {
          expect: { origin: null, from: { page: 2 }, readAt: time(30) },
          answer: { docs: [outboxDoc(3, 1, null)], readAt: time(30), next: null },
        },
      ],
    });
    const first = await feed.read(null, 2);
    expect(names(first)).toEqual(["d1/0", "d2/0"]);
    // Handed before the stream was opened: the reader is not kept waiting for the rest of the scan.
    expect(feed.actions.some((a) => a.type === "open")).toBe(false);
    const second = await feed.read(after(first), 2);
    expect(names(second)).toEqual(["d3/0"]);
    expect(await feed.read(after(second), 2)).toEqual([]);
    expect(feed.finished()).toBe(true);
  });

  test("a read from a scan position (a restart) scans on from its document's key, dropping what the reader passed", async () => {
    // Past entry 0 of document 3 (2 entries), handed by a scan that stamped it at second 20.
    const inScan: FeedPosition = {
      kind: "scan",
      ct: time(20),
      lb: time(3, 0),
      doc: outboxDoc(3, 2).id,
      k: 0,
      last: false,
    };
    const feed = scripted({
      openings: [{ expect: { startAtOperationTime: time(40) }, pulls: [[]] }],
      scans: [
        {
          // The page asked from the position itself (scan-page.ts reads the stamped documents from its key).
          expect: { origin: inScan, from: null, readAt: null },
          answer: {
            docs: [outboxDoc(3, 2, time(20)), outboxDoc(5, 1, time(20)), outboxDoc(6, 1, time(31))],
            readAt: time(40),
            next: { half: "unstamped" },
          },
        },
        {
          expect: { origin: inScan, from: { half: "unstamped" }, readAt: time(40) },
          answer: { docs: [outboxDoc(7, 1, null)], readAt: time(40), next: null },
        },
      ],
    });
    const handed = await feed.read(inScan);
    expect(names(handed)).toEqual(["d3/1", "d5/0", "d6/0", "d7/0"]);
    expect(handed[0]?.position).toEqual({ ...inScan, k: 1, last: true });
    expect(feed.stamps).toEqual([{ id: outboxDoc(7, 1).id, ct: time(40) }]);
    expect(feed.finished()).toBe(true);
  });

  test("a read from another position than the one held (a restart, the lease lost and taken back) keeps nothing and reopens there", async () => {
    const atFive: StreamPosition = { kind: "stream", ts: time(14), k: 0, last: true, token: ev5.token };
    const feed = scripted({
      openings: [
        { expect: { startAfter: ev1.token }, pulls: [[ev2, ev3]] },
        { expect: { startAfter: ev5.token }, pulls: [[ev6]] },
      ],
    });
    expect(names(await feed.read(saved, 1))).toEqual(["d2/0"]);
    expect(names(await feed.read(atFive, 1))).toEqual(["d6/0"]);
    const kinds = feed.actions.map((a) => a.type);
    expect(kinds.lastIndexOf("close")).toBeLessThan(kinds.lastIndexOf("open"));
    expect(feed.finished()).toBe(true);
  });

  test("the reader gone (lease lost, no read for a while) closes the stream and keeps nothing held", async () => {
    const feed = scripted({
      openings: [
        { expect: { startAfter: ev1.token }, pulls: [[ev2, ev3]] },
        { expect: { startAfter: ev2.token }, pulls: [[ev3]] },
      ],
    });
    const one = await feed.read(saved, 1);
    feed.tell({ type: "readerGone" });
    expect(feed.state()).toEqual({ phase: "closed" });
    expect(feed.actions.at(-1)).toEqual({ type: "close" });
    // Document 3 was held, and is read again from the stream, not from memory.
    expect(names(await feed.read(after(one), 1))).toEqual(["d3/0"]);
    expect(feed.actions.filter((a) => a.type === "open")).toHaveLength(2);
  });

  test("a read again from the same position with a larger limit is served from what is held, then the stream", async () => {
    const feed = scripted({
      openings: [{ expect: { startAfter: ev1.token }, pulls: [[insertEvent(2, 3, 11)], [ev3]] }],
    });
    expect(names(await feed.read(saved, 2))).toEqual(["d2/0", "d2/1"]);
    const again = await feed.read(saved, 4);
    expect(names(again)).toEqual(["d2/0", "d2/1", "d2/2", "d3/0"]);
    expect(again.map((e) => (e.position as StreamPosition).last)).toEqual([false, false, true, true]);
    expect(feed.actions.filter((a) => a.type === "open")).toHaveLength(1);
  });

  test("a stamp that fails fails the read and keeps nothing; the next read shows the same entries again", async () => {
    const feed = scripted({
      openings: [
        { expect: { startAfter: ev1.token }, pulls: [[ev2]] },
        { expect: { startAfter: ev1.token }, pulls: [[ev2]] },
      ],
      stampFailures: [network()],
    });
    await expect(feed.read(saved)).rejects.toThrow(MongoNetworkError);
    expect(feed.state().phase).toBe("closed");
    expect(names(await feed.read(saved))).toEqual(["d2/0"]);
    expect(feed.stamps).toEqual([{ id: ev2.doc.id, ct: time(11) }]);
  });

  test("a document a reader stamped already is not stamped again", async () => {
    const feed = scripted({
      openings: [{ expect: { startAfter: ev1.token }, pulls: [[insertEvent(2, 1, 11, time(11))]] }],
    });
    expect(names(await feed.read(saved))).toEqual(["d2/0"]);
    expect(feed.actions.some((a) => a.type === "stamp")).toBe(false);
  });

  test("a read while an answer is awaited is refused, not interleaved", async () => {
    const opening = step({ phase: "closed" }, { type: "read", after: saved, limit: 10 }).state;
    expect(opening.phase).toBe("opening");
    const refused = step(opening, { type: "read", after: saved, limit: 10 });
    expect(refused.state).toBe(opening);
    expect(refused.actions).toEqual([{ type: "fail", error: expect.any(Error) }]);
  });

  test("a late answer after the stream was closed changes nothing", async () => {
    const closed = { phase: "closed" } as const;
    expect(step(closed, { type: "received", events: [ev2] })).toEqual({ state: closed, actions: [] });
    expect(step(closed, { type: "failed", error: network() })).toEqual({ state: closed, actions: [] });
  });
});
