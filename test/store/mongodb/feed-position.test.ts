/**
 * The MongoDB change log's positions and cursors (api/store/mongodb/feed/feed-position.ts), and
 * what a change-stream error means for the feed (stream-errors.ts), from the driver's real error
 * classes with the server's codes and labels.
 */
import { describe, expect, test } from "bun:test";
import { MongoNetworkError, MongoServerError, MongoServerSelectionError } from "mongodb";
import type { FeedCursor } from "../../../api/model/record-values.ts";
import {
  decodePosition,
  encodePosition,
  type FeedPosition,
  resumeFrom,
  type StreamPosition,
  samePosition,
} from "../../../api/store/mongodb/feed/feed-position.ts";
import { classifyStreamError } from "../../../api/store/mongodb/feed/stream-errors.ts";

const stream: StreamPosition = {
  kind: "stream",
  ts: { t: 1_700_000_000, i: 3 },
  k: 2,
  last: true,
  token: "8265a1b2c3",
};
const scan: FeedPosition = {
  kind: "scan",
  ct: { t: 1_700_000_100, i: 1 },
  lb: { t: 1_699_999_990, i: 7 },
  doc: "65a1b2c3d4e5f60718293a4b",
  k: 0,
  last: false,
};

describe("cursors", () => {
  test.each([stream, scan, { ...scan, k: 3, last: true }] as FeedPosition[])("round trip: %o", (position) => {
    const cursor = encodePosition(position);
    expect(cursor).toStartWith("mdb1:");
    expect(decodePosition(cursor)).toEqual(position);
  });

  test("equal positions make equal cursors whatever the order of their keys", () => {
    const reordered = {
      token: stream.token,
      last: true,
      k: 2,
      ts: { i: 3, t: 1_700_000_000 },
      kind: "stream",
    } as const;
    expect(encodePosition(reordered)).toBe(encodePosition(stream));
    expect(samePosition(reordered, stream)).toBe(true);
    expect(samePosition(stream, { ...stream, k: 1 })).toBe(false);
    expect(samePosition(null, null)).toBe(true);
    expect(samePosition(null, stream)).toBe(false);
  });

  test.each([
    "pg:1.0,0.0",
    "mdb1:",
    "mdb1:not base64 json",
    encodePosition(stream).replace("mdb1:", "mdb2:"),
    `mdb1:${Buffer.from(JSON.stringify({ ...stream, k: -1 })).toString("base64url")}`,
    `mdb1:${Buffer.from(JSON.stringify({ ...stream, token: "not hex" })).toString("base64url")}`,
    // A scan position of the first design (its scan's origin and read time, no stamp key).
    `mdb1:${Buffer.from(JSON.stringify({ kind: "scan", origin: null, readAt: scan.ct, doc: scan.doc, k: 0 })).toString("base64url")}`,
  ])("a cursor not of this engine's is refused: %s", (cursor) => {
    expect(() => decodePosition(cursor as FeedCursor)).toThrow(
      "not a change-log cursor of the MongoDB store",
    );
  });

  test("a finished document resumes after its token; one part-way through at its commit time", () => {
    expect(resumeFrom(stream)).toEqual({ startAfter: stream.token });
    expect(resumeFrom({ ...stream, last: false })).toEqual({ startAtOperationTime: stream.ts });
  });
});

describe("change-stream errors", () => {
  const server = (code: number, codeName: string, errorLabels: string[] = []) =>
    new MongoServerError({ message: `${codeName} (scripted)`, code, codeName, errorLabels });
  test.each([
    ["a network error", "resumable", new MongoNetworkError("reset")],
    [
      "no server selectable",
      "resumable",
      new MongoServerSelectionError("no primary", { error: null } as never),
    ],
    [
      "ResumableChangeStreamError (a failover)",
      "resumable",
      server(11602, "InterruptedDueToReplStateChange", ["ResumableChangeStreamError"]),
    ],
    ["CursorNotFound (43)", "resumable", server(43, "CursorNotFound")],
    ["SnapshotTooOld (239), during a scan", "resumable", server(239, "SnapshotTooOld")],
    ["ChangeStreamHistoryLost (286)", "historyLost", server(286, "ChangeStreamHistoryLost")],
    ["InvalidResumeToken (260)", "historyLost", server(260, "InvalidResumeToken")],
    ["Unauthorized (13)", "fatal", server(13, "Unauthorized")],
    ["ChangeStreamFatalError (280)", "fatal", server(280, "ChangeStreamFatalError")],
    ["not a driver error", "fatal", new Error("the change log's collection was dropped or renamed")],
  ] as const)("%s → %s", (_, kind, error) => {
    expect(classifyStreamError(error)).toBe(kind);
  });
});
