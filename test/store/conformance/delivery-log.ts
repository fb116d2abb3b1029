/**
 * Conformance: the delivery log as the API reads and writes it (deliveries
 * inserted if absent, listed and reset) with the attempts the dispatcher logs
 * through its own port over the same data.
 */
import { describe, expect, test } from "bun:test";
import type { DeliveryRecord } from "../../../api/store/store.ts";
import { tenant, webhook } from "./fixtures.ts";
import type { StoreUnderTest } from "./store-under-test.ts";

export const delivery = (
  tenantId: string,
  webhookId: string,
  eventId: string,
  createdAt: number,
  status: DeliveryRecord["status"] = "pending",
  part = 0,
): DeliveryRecord => ({
  tenantId,
  id: `d-${crypto.randomUUID()}`,
  webhookId,
  eventId,
  part,
  status,
  body: JSON.stringify([{ eventId, part }]),
  test: false,
  attempts: 0,
  committedAt: createdAt - 1,
  createdAt,
  updatedAt: createdAt,
});

export function describeDeliveryLog(sut: StoreUnderTest): void {
  describe("delivery log", () => {
    test("deliveries are inserted if absent: the same webhook, mutation and part again leaves the first", async () => {
      const a = tenant("a");
      await sut.store.unitOfWork((tx) => tx.insertTenant(a));
      const first = delivery(a.id, "w1", "m1", 1000);
      // A test delivery (POST /webhooks/{id}/test) keeps its mark.
      const second = { ...delivery(a.id, "w1", "m1", 1000, "pending", 1), test: true };
      await sut.store.unitOfWork((tx) => tx.insertDeliveries([first, second]));
      // Re-logged after a crash: another id and body, the same webhook × mutation × part.
      const again = { ...delivery(a.id, "w1", "m1", 2000), body: "[]" };
      await sut.store.unitOfWork((tx) => tx.insertDeliveries([again, first]));
      expect(await sut.store.findDelivery(a.id, first.id)).toEqual(first);
      expect(await sut.store.findDelivery(a.id, second.id)).toEqual(second);
      expect(await sut.store.findDelivery(a.id, again.id)).toBeNull();
      expect(await sut.store.findDelivery(crypto.randomUUID(), first.id)).toBeNull();
      await sut.store.unitOfWork((tx) => tx.insertDeliveries([]));
    });

    test("a webhook's deliveries newest first, by status, time window and keyset, at most `limit`", async () => {
      const a = tenant("a");
      await sut.store.unitOfWork((tx) => tx.insertTenant(a));
      const logged = [
        delivery(a.id, "w1", "m1", 1000, "succeeded"),
        delivery(a.id, "w1", "m2", 2000, "failed"),
        delivery(a.id, "w1", "m3", 2000, "failed"),
        delivery(a.id, "w1", "m4", 3000, "pending"),
        delivery(a.id, "w2", "m1", 2500, "failed"),
      ];
      await sut.store.unitOfWork((tx) => tx.insertDeliveries(logged));
      const newestFirst = logged
        .filter((d) => d.webhookId === "w1")
        .toSorted((x, y) => y.createdAt - x.createdAt || (x.id < y.id ? 1 : -1));
      const list = (query: Parameters<typeof sut.store.listDeliveries>[2]) =>
        sut.store.listDeliveries(a.id, "w1", query).then((found) => found.map((d) => d.id));
      const ids = (ds: DeliveryRecord[]) => ds.map((d) => d.id);
      expect(await list({ limit: 10 })).toEqual(ids(newestFirst));
      expect(await list({ limit: 2 })).toEqual(ids(newestFirst.slice(0, 2)));
      expect(await list({ status: "failed", limit: 10 })).toEqual(
        ids(newestFirst.filter((d) => d.status === "failed")),
      );
      expect(await list({ since: 2000, until: 3000, limit: 10 })).toEqual(
        ids(newestFirst.filter((d) => d.createdAt >= 2000 && d.createdAt < 3000)),
      );
      const [, second] = newestFirst;
      if (!second) throw new Error("no second delivery");
      expect(await list({ before: { createdAt: second.createdAt, id: second.id }, limit: 10 })).toEqual(
        ids(newestFirst.slice(2)),
      );
      expect(await sut.store.listDeliveries(a.id, "w3", { limit: 10 })).toEqual([]);
    });

    test("a reset sets a delivery back to pending; the dispatcher's attempts are read back in order", async () => {
      const a = tenant("a");
      const hook = { ...webhook(a.id, "W1"), id: "w1" };
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        await tx.insertWebhook(hook);
      });
      const failed = delivery(a.id, "w1", "m1", 1000, "failed");
      const quiet = delivery(a.id, "w1", "m2", 1000, "pending");
      await sut.store.unitOfWork((tx) => tx.insertDeliveries([failed, quiet]));

      const dispatcher = await sut.dispatcherLog();
      const attempt = {
        startedAt: 1500,
        durationMs: 12,
        statusCode: 500,
        responseBody: "no",
        error: "HTTP 500",
      };
      expect(await dispatcher.recordAttempt(a.id, failed.id, attempt, "pending")).toBe(1);
      const ok = { ...attempt, startedAt: 1600, statusCode: 200, responseBody: "ok", error: null };
      expect(await dispatcher.recordAttempt(a.id, failed.id, ok, "succeeded")).toBe(2);
      sut.store.refreshReads();
      const attempts = await sut.store.listAttempts(a.id, [failed.id, quiet.id]);
      expect([...attempts.keys()]).toEqual([failed.id]);
      expect(attempts.get(failed.id)).toEqual([
        { attempt: 1, ...attempt, request: null },
        { attempt: 2, ...ok, request: null },
      ]);
      // An attempt started with its request is read back with it (in flight until finished).
      const sent = {
        url: "https://r.example/h",
        headers: { "x-key": "{{ KEY }}", "webhook-signature": "v1,x" },
      };
      const started = await dispatcher.startAttempt({
        tenantId: a.id,
        deliveryId: quiet.id,
        webhookId: hook.id,
        webhookVersion: hook.version,
        startedAt: 1700,
        request: sent,
      });
      expect(started).toEqual({ kind: "started", number: 1 });
      await dispatcher.finishAttempt(a.id, quiet.id, 1, ok, "succeeded");
      sut.store.refreshReads();
      expect((await sut.store.listAttempts(a.id, [quiet.id])).get(quiet.id)).toEqual([
        { attempt: 1, ...ok, request: sent },
      ]);
      expect((await sut.store.listAttempts(a.id, [])).size).toBe(0);
      expect((await sut.store.listAttempts(crypto.randomUUID(), [failed.id])).size).toBe(0);

      await sut.store.unitOfWork(async (tx) => {
        await tx.resetDelivery(a.id, failed.id, 9000);
        await tx.resetDelivery(a.id, "no such delivery", 9000);
      });
      expect(await sut.store.findDelivery(a.id, failed.id)).toEqual({
        ...failed,
        status: "pending",
        attempts: 2,
        updatedAt: 9000,
      });
    });

    test("an attempt is logged as started only while its delivery is unfinished and its webhook at the version its request was built from; else nothing is written and the answer says why", async () => {
      const a = tenant("a");
      const hook = webhook(a.id, "Hook");
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        await tx.insertWebhook(hook);
      });
      const open = delivery(a.id, hook.id, "m1", 1000);
      const done = delivery(a.id, hook.id, "m2", 1000, "succeeded");
      await sut.store.unitOfWork((tx) => tx.insertDeliveries([open, done]));
      const dispatcher = await sut.dispatcherLog();
      const start = (deliveryId: string, webhookVersion: number) =>
        dispatcher.startAttempt({
          tenantId: a.id,
          deliveryId,
          webhookId: hook.id,
          webhookVersion,
          startedAt: 1500,
          request: { url: hook.url, headers: {} },
        });
      // The version an attempt builds from is the one read with the delivery's status.
      expect(await dispatcher.loadDelivery(a.id, open.id, hook.id)).toMatchObject({
        status: "pending",
        webhook: { id: hook.id, url: hook.url, headers: hook.headers, version: hook.version },
      });

      expect(await start(done.id, hook.version)).toEqual({ kind: "finished", status: "succeeded" });
      expect(await start("no such delivery", hook.version)).toEqual({ kind: "unlogged" });
      await sut.store.unitOfWork((tx) => tx.replaceWebhook({ ...hook, url: "https://elsewhere.example/" }));
      expect(await start(open.id, hook.version)).toEqual({ kind: "webhook-changed" });
      sut.store.refreshReads();
      expect(await sut.store.findDelivery(a.id, open.id)).toEqual(open);
      expect(await sut.store.findDelivery(a.id, done.id)).toEqual(done);
      expect((await sut.store.listAttempts(a.id, [open.id, done.id])).size).toBe(0);

      expect(await start(open.id, hook.version + 1)).toEqual({ kind: "started", number: 1 });
      sut.store.refreshReads();
      expect(await sut.store.findDelivery(a.id, open.id)).toMatchObject({
        status: "delivering",
        attempts: 1,
      });
      await sut.store.unitOfWork((tx) => tx.deleteWebhook(a.id, hook.id));
      expect(await start(open.id, hook.version + 1)).toEqual({ kind: "webhook-changed" });
    });
  });
}
