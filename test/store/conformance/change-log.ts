/** Conformance: the change log read through engine-owned cursors, and the feed readers' saved cursors. */
import { describe, expect, test } from "bun:test";
import type { FeedCursor, LoggedChange } from "../../../api/model/record-values.ts";
import type { Store } from "../../../api/store/store.ts";
import { changeEntry, tenant } from "./fixtures.ts";
import type { StoreUnderTest } from "./store-under-test.ts";

/** Every entry after `from`, read `pageSize` at a time, going on from each read's `next`. */
async function readAll(store: Store, from: FeedCursor | null, pageSize: number): Promise<LoggedChange[]> {
  const all: LoggedChange[] = [];
  let cursor = from;
  for (;;) {
    const page = await store.readChanges(cursor, pageSize);
    expect(page.entries.length).toBeLessThanOrEqual(pageSize);
    all.push(...page.entries);
    if (page.entries.length === 0) {
      expect(page.next).toBe(cursor);
      return all;
    }
    expect(page.next).toBe(page.entries.at(-1)?.cursor ?? null);
    cursor = page.next;
  }
}

const withoutCursor = ({ cursor: _, ...entry }: LoggedChange) => entry;

export function describeChangeLog(sut: StoreUnderTest): void {
  describe("change log", () => {
    test("an empty log reads as nothing, and its next cursor is where the read started", async () => {
      expect(await sut.store.readChanges(null, 10)).toEqual({ entries: [], next: null });
    });

    test("entries read in commit order, one unit of work's contiguous and in the order appended, page by page", async () => {
      const t = tenant("a");
      const first = [0, 1, 2].map((i) => changeEntry(t.id, "m1", i));
      const second = [0, 1].map((i) => changeEntry(t.id, "m2", i));
      await sut.store.unitOfWork((tx) => tx.appendChanges(first));
      await sut.store.unitOfWork(async (tx) => {
        await tx.appendChanges(second.slice(0, 1));
        await tx.appendChanges(second.slice(1));
      });
      for (const pageSize of [1, 2, 100]) {
        const read = await readAll(sut.store, null, pageSize);
        expect(read.map(withoutCursor)).toEqual([...first, ...second]);
      }
      const whole = await sut.store.readChanges(null, 100);
      // Reading after an entry's cursor goes on with the next one.
      const afterSecond = await sut.store.readChanges(whole.entries[1]?.cursor ?? null, 100);
      expect(afterSecond.entries.map(withoutCursor)).toEqual([...first.slice(2), ...second]);
      expect(afterSecond.next).toBe(whole.next);
    });

    test("a unit of work that throws appends nothing", async () => {
      const t = tenant("a");
      await expect(
        sut.store.unitOfWork(async (tx) => {
          await tx.appendChanges([changeEntry(t.id, "m1", 0)]);
          throw new Error("rolled back");
        }),
      ).rejects.toThrow("rolled back");
      expect((await sut.store.readChanges(null, 10)).entries).toEqual([]);
    });

    test("a reader going on from its cursor never skips an entry committed after those it read", async () => {
      const t = tenant("a");
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      // The first unit appends and waits; the second, started meanwhile, appends at once.
      const slow = sut.store.unitOfWork(async (tx) => {
        await tx.appendChanges([changeEntry(t.id, "slow", 0)]);
        await held;
      });
      await Bun.sleep(5);
      const fast = sut.store.unitOfWork((tx) => tx.appendChanges([changeEntry(t.id, "fast", 0)]));
      await Bun.sleep(20);
      sut.store.refreshReads();
      const before = await sut.store.readChanges(null, 10);
      release();
      await Promise.all([slow, fast]);
      sut.store.refreshReads();
      const after = await readAll(sut.store, before.next, 10);
      const seen = [...before.entries, ...after].map((entry) => entry.mutationId);
      expect(seen.toSorted()).toEqual(["fast", "slow"]);
    });

    test("a reader's saved cursor is null until saved, replaced by each save, and survives a reopen", async () => {
      const t = tenant("a");
      await sut.store.unitOfWork((tx) => tx.appendChanges([0, 1, 2].map((i) => changeEntry(t.id, "m", i))));
      const { entries } = await sut.store.readChanges(null, 10);
      const [one, two] = entries.map((entry) => entry.cursor);
      expect(await sut.store.feedPosition("main")).toBeNull();
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("main", one ?? null, 1));
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("main", two ?? null, 2));
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("other", null, 2));
      expect(await sut.store.feedPosition("main")).toBe(two ?? null);
      expect(two).toBeString();
      expect(await sut.store.feedPosition("other")).toBeNull();

      const other = await sut.reopen();
      const saved = await other.feedPosition("main");
      expect(saved).toBe(two ?? null);
      expect((await other.readChanges(saved, 10)).entries.map(withoutCursor)).toEqual(
        entries.slice(2).map(withoutCursor),
      );
    });

    test("text that is not one of the engine's cursors is refused", async () => {
      await expect(sut.store.readChanges("not a cursor" as FeedCursor, 10)).rejects.toThrow();
    });

    test("an entry keeps the id of the request that made it; one without reads back without", async () => {
      const t = tenant("a");
      const traced = { ...changeEntry(t.id, "m", 0), requestId: "req-1" };
      const untraced = changeEntry(t.id, "m", 1);
      await sut.store.unitOfWork((tx) =>
        tx.appendChanges([traced, untraced, { ...untraced, requestId: null }]),
      );
      const { entries } = await sut.store.readChanges(null, 10);
      expect(entries.map(withoutCursor)).toEqual([traced, untraced, untraced]);
    });

    test("lag: the entries after a cursor and the first one's commit time, exact after retention", async () => {
      const t = tenant("a");
      expect(await sut.store.changeLogLag(null)).toEqual({ changes: 0, oldestCommittedAt: null });
      await sut.store.unitOfWork((tx) =>
        tx.appendChanges([1000, 2000, 3000].map((at, i) => changeEntry(t.id, `m${i}`, 0, at))),
      );
      const cursors = (await sut.store.readChanges(null, 10)).entries.map((entry) => entry.cursor);
      const [first, second, third] = cursors as [FeedCursor, FeedCursor, FeedCursor];
      expect(await sut.store.changeLogLag(null)).toEqual({ changes: 3, oldestCommittedAt: 1000 });
      expect(await sut.store.changeLogLag(first)).toEqual({ changes: 2, oldestCommittedAt: 2000 });
      expect(await sut.store.changeLogLag(second)).toEqual({ changes: 1, oldestCommittedAt: 3000 });
      expect(await sut.store.changeLogLag(third)).toEqual({ changes: 0, oldestCommittedAt: null });
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("main", first, Date.now()));
      expect(await sut.store.unitOfWork((tx) => tx.pruneChanges(Date.now(), 10))).toBe(1);
      expect(await sut.store.changeLogLag(first)).toEqual({ changes: 2, oldestCommittedAt: 2000 });
      await expect(sut.store.changeLogLag("not a cursor" as FeedCursor)).rejects.toThrow();
    });
  });
}
