/**
 * The store conformance suite's change-log retention and copy cases
 * (test/store/conformance/retention.ts, copy.ts) and those of change-log.ts
 * a log of one partition and one process can replay, replayed step for step on
 * the MongoDB engine's pure logic over the documents it writes and stamps
 * (mingo-outbox.ts: mingo stands in for the server, which cannot run here;
 * it proves what the filters, orders and updates do to the documents, not
 * indexes, transactions or concurrency). The readers' cursors here are scan
 * positions, as a read from the log's start hands them: each must say
 * exactly what its reader has passed.
 */
import { describe, expect, test } from "bun:test";
import type { ChangeEntry, FeedCursor } from "../../../api/model/record-values.ts";
import { changeEntry } from "../conformance/fixtures.ts";
import { replayedChangeLog } from "./mingo-outbox.ts";

const mutations = (entries: readonly { mutationId: string }[]) => entries.map((entry) => entry.mutationId);

describe("the conformance suite's change-log cases, replayed on the MongoDB engine's documents", () => {
  for (const scanPage of [500, 1])
    describe(`scan pages of ${scanPage}`, () => {
      test("retention: only entries older than the cut-off that every saved reader has passed, at most `limit`", async () => {
        const log = replayedChangeLog({ scanPage });
        for (const [i, at] of [100, 200, 300, 400, 500].entries())
          log.append([changeEntry("ta", `m${i + 1}`, 0, at)]);
        const left = async () => mutations((await log.readChanges(null, 100)).entries);
        const cursors = (await log.readChanges(null, 100)).entries.map((entry) => entry.cursor);
        expect(cursors).toHaveLength(5);

        expect(log.pruneChanges(1000, 100)).toBe(0);
        log.setFeedPosition("main", null);
        expect(log.pruneChanges(1000, 100)).toBe(0);
        log.setFeedPosition("main", cursors[3] ?? null);
        expect(log.pruneChanges(350, 2)).toBe(2);
        expect(await left()).toEqual(["m3", "m4", "m5"]);
        expect(log.pruneChanges(350, 2)).toBe(1);
        expect(log.pruneChanges(350, 2)).toBe(0);
        expect(await left()).toEqual(["m4", "m5"]);
        log.setFeedPosition("other", cursors[2] ?? null);
        expect(log.pruneChanges(1000, 100)).toBe(0);
        log.setFeedPosition("other", cursors[4] ?? null);
        expect(log.pruneChanges(1000, 100)).toBe(1);
        expect(await left()).toEqual(["m5"]);
        expect(mutations((await log.readChanges(cursors[3] ?? null, 10)).entries)).toEqual(["m5"]);
      });

      test("retention: the one partition keeps what its readers have not passed", async () => {
        const log = replayedChangeLog({ scanPage });
        log.append([changeEntry("ta", "a1", 0, 100)]);
        log.append([changeEntry("tb", "b1", 0, 100)]);
        const left = async () => mutations((await log.readChanges(null, 10)).entries).sort();
        const pastA = (await log.readChanges(null, 10)).entries.find((e) => e.tenantId === "ta")?.cursor;
        log.setFeedPosition("main", pastA ?? null);
        expect(log.pruneChanges(1000, 100)).toBe(1);
        expect(await left()).toEqual(["b1"]);
        log.setFeedPosition("other", pastA ?? null);
        const { next: pastB } = await log.readChanges(null, 10);
        log.setFeedPosition("main", pastB);
        expect(log.pruneChanges(1000, 100)).toBe(0);
        expect(await left()).toEqual(["b1"]);
        log.setFeedPosition("other", pastB);
        expect(log.pruneChanges(1000, 100)).toBe(1);
        expect(await left()).toEqual([]);
      });

      test("copy: the tail no reader has passed is read on from the lower reader's place, in order", async () => {
        const log = replayedChangeLog({ scanPage });
        expect(log.passedByAllReaders()).toBeNull();
        const units: ChangeEntry[][] = [
          [changeEntry("ta", "m1", 0, 1000), changeEntry("ta", "m1", 1, 1000)],
          [{ ...changeEntry("ta", "m2", 0, 2000), requestId: "req-2" }],
          [changeEntry("ta", "m3", 0, 3000)],
        ];
        for (const entries of units) log.append(entries);
        const read = (await log.readChanges(null, 10)).entries;
        log.setFeedPosition("main", read[2]?.cursor ?? null);
        log.setFeedPosition("behind", read[1]?.cursor ?? null);
        const passed = log.passedByAllReaders();
        const tail = (await log.readChanges(passed, 10)).entries;
        expect(mutations(tail)).toEqual(["m2", "m3"]);
        expect(tail.map(({ cursor, ...entry }) => entry)).toEqual([...(units[1] ?? []), ...(units[2] ?? [])]);
      });
    });

  describe("change-log.ts", () => {
    test("entries read in commit order, one unit of work's contiguous and in the order appended, page by page", async () => {
      const log = replayedChangeLog();
      const first = [0, 1, 2].map((i) => changeEntry("ta", "m1", i));
      const second = [0, 1].map((i) => changeEntry("ta", "m2", i));
      log.append(first);
      log.append(second);
      for (const pageSize of [1, 2, 100]) {
        const read: ChangeEntry[] = [];
        let cursor: FeedCursor | null = null;
        for (;;) {
          const page = await log.readChanges(cursor, pageSize);
          if (page.entries.length === 0) break;
          read.push(...page.entries.map(({ cursor: _, ...entry }) => entry));
          cursor = page.next;
        }
        expect(read).toEqual([...first, ...second]);
      }
      const whole = await log.readChanges(null, 100);
      const afterSecond = await log.readChanges(whole.entries[1]?.cursor ?? null, 100);
      expect(afterSecond.entries.map(({ cursor: _, ...entry }) => entry)).toEqual([
        ...first.slice(2),
        ...second,
      ]);
      expect(afterSecond.next).toBe(whole.next);
    });

    test("a reader's saved cursor, part-way through a unit of work read in a scan, reads on just after it in a new process", async () => {
      const log = replayedChangeLog();
      log.append([0, 1, 2].map((i) => changeEntry("ta", "m", i)));
      const { entries } = await log.readChanges(null, 10);
      log.reopen();
      const rest = await log.readChanges(entries[1]?.cursor ?? null, 10);
      expect(rest.entries.map(({ cursor: _, ...entry }) => entry)).toEqual(
        entries.slice(2).map(({ cursor: _, ...entry }) => entry),
      );
    });

    test("lag: the entries after a cursor and the first one's commit time, exact after retention", async () => {
      const log = replayedChangeLog();
      expect(log.changeLogLag(null)).toEqual({ changes: 0, oldestCommittedAt: null });
      log.append([1000, 2000, 3000].map((at, i) => changeEntry("ta", `m${i}`, 0, at)));
      const cursors = (await log.readChanges(null, 10)).entries.map((entry) => entry.cursor);
      const [first, second, third] = cursors as [FeedCursor, FeedCursor, FeedCursor];
      expect(log.changeLogLag(null)).toEqual({ changes: 3, oldestCommittedAt: 1000 });
      expect(log.changeLogLag(first)).toEqual({ changes: 2, oldestCommittedAt: 2000 });
      expect(log.changeLogLag(second)).toEqual({ changes: 1, oldestCommittedAt: 3000 });
      expect(log.changeLogLag(third)).toEqual({ changes: 0, oldestCommittedAt: null });
      log.setFeedPosition("main", first);
      expect(log.pruneChanges(Date.now(), 10)).toBe(1);
      expect(log.changeLogLag(first)).toEqual({ changes: 2, oldestCommittedAt: 2000 });
      // What is left of the unit reads on from every cursor as before.
      expect(mutations((await log.readChanges(null, 10)).entries)).toEqual(["m1", "m2"]);
      expect(mutations((await log.readChanges(second, 10)).entries)).toEqual(["m2"]);
      log.reopen();
      expect(mutations((await log.readChanges(first, 10)).entries)).toEqual(["m1", "m2"]);
    });
  });
});
