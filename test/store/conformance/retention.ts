/**
 * Conformance: retention steps. The delivery log loses finished deliveries
 * (with their attempts) older than the cut-off, a bounded step at a time; the
 * change log loses old entries only once every feed reader has passed them.
 */
import { describe, expect, test } from "bun:test";
import { partitionOfTenant } from "../../../api/store/feed-partitions.ts";
import type { DeliveryAge, DeliveryPruneStep } from "../../../api/store/store.ts";
import { delivery } from "./delivery-log.ts";
import { changeEntry, tenant } from "./fixtures.ts";
import type { StoreUnderTest } from "./store-under-test.ts";

export function describeRetention(sut: StoreUnderTest): void {
  describe("retention", () => {
    test("deliveries: finished ones created and last changed before the cut-off go, with their attempts, step by step", async () => {
      const a = tenant("a");
      await sut.store.unitOfWork((tx) => tx.insertTenant(a));
      // After now: the dispatcher's port stamps an attempt's delivery with the real clock.
      const cut = Date.now() + 3_600_000;
      const old = (mutation: string, at: number, status: "pending" | "delivering" | "succeeded" | "failed") =>
        delivery(a.id, "w1", mutation, at, status);
      const logged = [
        old("m1", 100, "succeeded"),
        old("m2", 200, "failed"),
        old("m3", 300, "pending"),
        old("m4", 400, "delivering"),
        { ...old("m5", 500, "succeeded"), updatedAt: cut },
        old("m6", 600, "failed"),
        old("m7", 700, "succeeded"),
        old("m8", cut + 1, "succeeded"),
      ];
      await sut.store.unitOfWork((tx) => tx.insertDeliveries(logged));
      const withAttempt = logged[0]?.id as string;
      const attempt = { startedAt: 150, durationMs: 1, statusCode: 200, responseBody: null, error: null };
      expect(await (await sut.dispatcherLog()).recordAttempt(a.id, withAttempt, attempt, "succeeded")).toBe(
        1,
      );
      sut.store.refreshReads();

      const steps: DeliveryPruneStep[] = [];
      let after: DeliveryAge | null = null;
      do {
        const from: DeliveryAge | null = after;
        const step: DeliveryPruneStep = await sut.store.unitOfWork((tx) => tx.pruneDeliveries(cut, 3, from));
        steps.push(step);
        after = step.next;
      } while (after !== null && steps.length < 10);
      // Seven deliveries created before the cut-off, looked at three at a time.
      expect(steps.map((step) => step.deleted)).toEqual([2, 1, 1]);
      expect(steps.map((step) => step.next === null)).toEqual([false, false, true]);
      const remaining = await Promise.all(logged.map((d) => sut.store.findDelivery(a.id, d.id)));
      expect(logged.filter((_, i) => remaining[i] !== null).map((d) => d.eventId)).toEqual([
        "m3",
        "m4",
        "m5",
        "m8",
      ]);
      expect((await sut.store.listAttempts(a.id, [withAttempt])).size).toBe(0);
      expect(await sut.store.unitOfWork((tx) => tx.pruneDeliveries(cut, 3, null))).toMatchObject({
        deleted: 0,
      });
    });

    test("the change log: only entries older than the cut-off that every saved reader has passed, at most `limit`", async () => {
      const t = tenant("a");
      const p = partitionOfTenant(t.id, sut.store.feedPartitions());
      const append = (mutation: string, committedAt: number) =>
        sut.store.unitOfWork((tx) => tx.appendChanges([changeEntry(t.id, mutation, 0, committedAt)]));
      for (const [i, at] of [100, 200, 300, 400, 500].entries()) await append(`m${i + 1}`, at);
      const prune = (before: number, limit: number) =>
        sut.store.unitOfWork((tx) => tx.pruneChanges(before, limit));
      const left = async () =>
        (await sut.store.readChanges(p, null, 100)).entries.map((entry) => entry.mutationId);
      const cursors = (await sut.store.readChanges(p, null, 100)).entries.map((entry) => entry.cursor);

      // No reader saved: nothing is passed.
      expect(await prune(1000, 100)).toBe(0);
      // A reader at the partition's start has passed nothing either.
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("main", p, null, 1));
      expect(await prune(1000, 100)).toBe(0);
      // Past the fourth entry: the first three of those go, a step of two at a time.
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("main", p, cursors[3] ?? null, 1));
      expect(await prune(350, 2)).toBe(2);
      expect(await left()).toEqual(["m3", "m4", "m5"]);
      expect(await prune(350, 2)).toBe(1);
      expect(await prune(350, 2)).toBe(0);
      expect(await left()).toEqual(["m4", "m5"]);
      // A second reader further behind holds entries back for both.
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("other", p, cursors[2] ?? null, 1));
      expect(await prune(1000, 100)).toBe(0);
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("other", p, cursors[4] ?? null, 1));
      expect(await prune(1000, 100)).toBe(1);
      expect(await left()).toEqual(["m5"]);
      // The readers' cursors still read on from where they were.
      const main = await sut.store.feedPosition("main", p);
      expect((await sut.store.readChanges(p, main, 10)).entries.map((entry) => entry.mutationId)).toEqual([
        "m5",
      ]);
    });

    test("the change log: each partition keeps what its own readers have not passed, whatever the others did", async () => {
      const partitions = sut.store.feedPartitions();
      // Two tenants in different partitions where there are two (the same one otherwise).
      const a = tenant("a");
      let b = tenant("b");
      while (partitions > 1 && partitionOfTenant(b.id, partitions) === partitionOfTenant(a.id, partitions))
        b = tenant("b");
      const [pa, pb] = [a, b].map((t) => partitionOfTenant(t.id, partitions)) as [number, number];
      await sut.store.unitOfWork((tx) => tx.appendChanges([changeEntry(a.id, "a1", 0, 100)]));
      await sut.store.unitOfWork((tx) => tx.appendChanges([changeEntry(b.id, "b1", 0, 100)]));
      const prune = () => sut.store.unitOfWork((tx) => tx.pruneChanges(1000, 100));
      const left = async () => {
        const read = await Promise.all([...new Set([pa, pb])].map((p) => sut.store.readChanges(p, null, 10)));
        return read.flatMap((page) => page.entries.map((entry) => entry.mutationId)).sort();
      };
      // "main" passed a's entry in a's partition: it goes; b's partition (where it is another) keeps b's.
      const pastA = (await sut.store.readChanges(pa, null, 10)).entries.find(
        (e) => e.tenantId === a.id,
      )?.cursor;
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("main", pa, pastA ?? null, 1));
      expect(await prune()).toBe(1);
      expect(await left()).toEqual(["b1"]);
      // A second reader that has saved a position in a's partition only has passed nothing in b's.
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("other", pa, pastA ?? null, 1));
      const { next: pastB } = await sut.store.readChanges(pb, null, 10);
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("main", pb, pastB, 1));
      expect(await prune()).toBe(0);
      expect(await left()).toEqual(["b1"]);
      // Passed there by both: it goes.
      await sut.store.unitOfWork((tx) => tx.setFeedPosition("other", pb, pastB, 1));
      expect(await prune()).toBe(1);
      expect(await left()).toEqual([]);
    });
  });
}
