/**
 * Conformance: the change log in partitions, each read through engine-owned cursors, and the feed
 * readers' saved cursors per partition.
 */
import { describe, expect, test } from "bun:test";
import type { FeedCursor, LoggedChange } from "../../../api/model/record-values.ts";
import { partitionOfTenant } from "../../../api/store/feed-partitions.ts";
import type { Store } from "../../../api/store/store.ts";
import { changeEntry, tenant } from "./fixtures.ts";
import type { StoreUnderTest } from "./store-under-test.ts";

/** Every entry of `partition` after `from`, read `pageSize` at a time, going on from each read's `next`. */
async function readAll(
  store: Store,
  partition: number,
  from: FeedCursor | null,
  pageSize: number,
): Promise<LoggedChange[]> {
  const all: LoggedChange[] = [];
  let cursor = from;
  for (;;) {
    const page = await store.readChanges(partition, cursor, pageSize);
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

/** A new tenant whose entries go to partition `partition` of the store's log (any, when there is one). */
function tenantIn(store: Store, partition: number) {
  for (;;) {
    const t = tenant("p");
    if (partitionOfTenant(t.id, store.feedPartitions()) === partition) return t;
  }
}

export function describeChangeLog(sut: StoreUnderTest): void {
  describe("change log", () => {
    /** The partition of `t`'s entries in the store under test. */
    const partitionOf = (t: { id: string }) => partitionOfTenant(t.id, sut.store.feedPartitions());

    test("an empty log reads as nothing in every partition, and its next cursor is where the read started", async () => {
      const partitions = sut.store.feedPartitions();
      expect(Number.isInteger(partitions) && partitions >= 1).toBe(true);
      for (let p = 0; p < partitions; p++) {
        expect(await sut.store.readChanges(p, null, 10)).toEqual({ entries: [], next: null });
        expect(await sut.store.changeLogLag(p, null)).toEqual({ changes: 0, oldestCommittedAt: null });
      }
    });

    test("the partitions are the store's: the same through another handle and inside a unit of work", async () => {
      const partitions = sut.store.feedPartitions();
      expect((await sut.reopen()).feedPartitions()).toBe(partitions);
      expect(await sut.store.unitOfWork(async (tx) => tx.feedPartitions())).toBe(partitions);
    });

    test("a partition outside 0 … P−1 is refused by every read and by a save", async () => {
      const partitions = sut.store.feedPartitions();
      for (const p of [-1, partitions, 1.5]) {
        await expect(sut.store.readChanges(p, null, 10)).rejects.toThrow();
        await expect(sut.store.changeLogLag(p, null)).rejects.toThrow();
        await expect(sut.store.feedPosition("main", p)).rejects.toThrow();
        await expect(sut.store.unitOfWork((tx) => tx.setFeedPosition("main", p, null, 1))).rejects.toThrow();
      }
    });

    test("a tenant's entries are all in its partition; every other partition reads none of them", async () => {
      const partitions = sut.store.feedPartitions();
      const tenants = Array.from({ length: 8 }, (_, i) => tenant(`t${i}`));
      for (const t of tenants)
        await sut.store.unitOfWork((tx) =>
          tx.appendChanges([0, 1].map((i) => changeEntry(t.id, `m-${t.id}`, i))),
        );
      for (let p = 0; p < partitions; p++) {
        const read = await readAll(sut.store, p, null, 3);
        const expected = tenants.filter((t) => partitionOf(t) === p).map((t) => t.id);
        expect([...new Set(read.map((entry) => entry.tenantId))].sort()).toEqual(expected.sort());
        expect(read).toHaveLength(expected.length * 2);
      }
    });

    test("a cursor of one partition is refused by the reads of another", async () => {
      if (sut.store.feedPartitions() < 2) return;
      const t = tenantIn(sut.store, 0);
      await sut.store.unitOfWork((tx) => tx.appendChanges([changeEntry(t.id, "m", 0)]));
      const { next } = await sut.store.readChanges(0, null, 10);
      expect(next).toBeString();
      await expect(sut.store.readChanges(1, next, 10)).rejects.toThrow();
      await expect(sut.store.changeLogLag(1, next)).rejects.toThrow();
      await expect(sut.store.unitOfWork((tx) => tx.setFeedPosition("main", 1, next, 1))).rejects.toThrow();
    });

    test("a reader's positions are per partition: saving one leaves the others where they were", async () => {
      if (sut.store.feedPartitions() < 2) return;
      const [a, b] = [tenantIn(sut.store, 0), tenantIn(sut.store, 1)];
      for (const t of [a, b])
        await sut.store.unitOfWork((tx) =>
          tx.appendChanges([0, 1].map((i) => changeEntry(t.id, `m-${t.id}`, i))),
        );
      const [first] = (await sut.store.readChanges(0, null, 10)).entries;
      const { next: end } = await sut.store.readChanges(1, null, 10);
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("main", 0, first?.cursor ?? null, 1));
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("main", 1, end, 2));
      expect(await sut.store.feedPosition("main", 0)).toBe(first?.cursor ?? null);
      expect(await sut.store.feedPosition("main", 1)).toBe(end);
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("main", 1, null, 3));
      expect(await sut.store.feedPosition("main", 0)).toBe(first?.cursor ?? null);
      expect(await sut.store.feedPosition("main", 1)).toBeNull();
    });

    test("entries read in commit order, one unit of work's contiguous and in the order appended, page by page", async () => {
      const t = tenant("a");
      const p = partitionOf(t);
      const first = [0, 1, 2].map((i) => changeEntry(t.id, "m1", i));
      const second = [0, 1].map((i) => changeEntry(t.id, "m2", i));
      await sut.store.unitOfWork((tx) => tx.appendChanges(first));
      await sut.store.unitOfWork(async (tx) => {
        await tx.appendChanges(second.slice(0, 1));
        await tx.appendChanges(second.slice(1));
      });
      for (const pageSize of [1, 2, 100]) {
        const read = await readAll(sut.store, p, null, pageSize);
        expect(read.map(withoutCursor)).toEqual([...first, ...second]);
      }
      const whole = await sut.store.readChanges(p, null, 100);
      // Reading after an entry's cursor goes on with the next one.
      const afterSecond = await sut.store.readChanges(p, whole.entries[1]?.cursor ?? null, 100);
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
      expect((await sut.store.readChanges(partitionOf(t), null, 10)).entries).toEqual([]);
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
      const before = await sut.store.readChanges(partitionOf(t), null, 10);
      release();
      await Promise.all([slow, fast]);
      sut.store.refreshReads();
      const after = await readAll(sut.store, partitionOf(t), before.next, 10);
      const seen = [...before.entries, ...after].map((entry) => entry.mutationId);
      expect(seen.toSorted()).toEqual(["fast", "slow"]);
    });

    test("a reader's saved cursor is null until saved, replaced by each save, and survives a reopen", async () => {
      const t = tenant("a");
      const p = partitionOf(t);
      await sut.store.unitOfWork((tx) => tx.appendChanges([0, 1, 2].map((i) => changeEntry(t.id, "m", i))));
      const { entries } = await sut.store.readChanges(p, null, 10);
      const [one, two] = entries.map((entry) => entry.cursor);
      expect(await sut.store.feedPosition("main", p)).toBeNull();
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("main", p, one ?? null, 1));
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("main", p, two ?? null, 2));
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("other", p, null, 2));
      expect(await sut.store.feedPosition("main", p)).toBe(two ?? null);
      expect(two).toBeString();
      expect(await sut.store.feedPosition("other", p)).toBeNull();

      const other = await sut.reopen();
      const saved = await other.feedPosition("main", p);
      expect(saved).toBe(two ?? null);
      expect((await other.readChanges(p, saved, 10)).entries.map(withoutCursor)).toEqual(
        entries.slice(2).map(withoutCursor),
      );
    });

    test("text that is not one of the engine's cursors is refused", async () => {
      await expect(sut.store.readChanges(0, "not a cursor" as FeedCursor, 10)).rejects.toThrow();
    });

    test("an entry keeps the id of the request that made it; one without reads back without", async () => {
      const t = tenant("a");
      const traced = { ...changeEntry(t.id, "m", 0), requestId: "req-1" };
      const untraced = changeEntry(t.id, "m", 1);
      await sut.store.unitOfWork((tx) =>
        tx.appendChanges([traced, untraced, { ...untraced, requestId: null }]),
      );
      const { entries } = await sut.store.readChanges(partitionOf(t), null, 10);
      expect(entries.map(withoutCursor)).toEqual([traced, untraced, untraced]);
    });

    test("lag: the entries after a cursor and the first one's commit time, exact after retention", async () => {
      const t = tenant("a");
      const p = partitionOf(t);
      expect(await sut.store.changeLogLag(p, null)).toEqual({ changes: 0, oldestCommittedAt: null });
      await sut.store.unitOfWork((tx) =>
        tx.appendChanges([1000, 2000, 3000].map((at, i) => changeEntry(t.id, `m${i}`, 0, at))),
      );
      const cursors = (await sut.store.readChanges(p, null, 10)).entries.map((entry) => entry.cursor);
      const [first, second, third] = cursors as [FeedCursor, FeedCursor, FeedCursor];
      expect(await sut.store.changeLogLag(p, null)).toEqual({ changes: 3, oldestCommittedAt: 1000 });
      expect(await sut.store.changeLogLag(p, first)).toEqual({ changes: 2, oldestCommittedAt: 2000 });
      expect(await sut.store.changeLogLag(p, second)).toEqual({ changes: 1, oldestCommittedAt: 3000 });
      expect(await sut.store.changeLogLag(p, third)).toEqual({ changes: 0, oldestCommittedAt: null });
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("main", p, first, Date.now()));
      expect(await sut.store.unitOfWork((tx) => tx.pruneChanges(Date.now(), 10))).toBe(1);
      expect(await sut.store.changeLogLag(p, first)).toEqual({ changes: 2, oldestCommittedAt: 2000 });
      await expect(sut.store.changeLogLag(p, "not a cursor" as FeedCursor)).rejects.toThrow();
    });

    test("lag is each partition's own: another partition's backlog does not count", async () => {
      if (sut.store.feedPartitions() < 2) return;
      const [a, b] = [tenantIn(sut.store, 0), tenantIn(sut.store, 1)];
      await sut.store.unitOfWork((tx) => tx.appendChanges([changeEntry(a.id, "a", 0, 1000)]));
      await sut.store.unitOfWork((tx) =>
        tx.appendChanges([0, 1].map((i) => changeEntry(b.id, "b", i, 2000))),
      );
      expect(await sut.store.changeLogLag(0, null)).toEqual({ changes: 1, oldestCommittedAt: 1000 });
      expect(await sut.store.changeLogLag(1, null)).toEqual({ changes: 2, oldestCommittedAt: 2000 });
    });
  });
}
