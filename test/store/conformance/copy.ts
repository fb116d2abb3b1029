/**
 * Conformance: the members copying a store uses (`npm run admin -- copy-store`), each read from
 * this test's store and written into another fresh store of the same engine, as the copy does
 * across engines: users and tokens in id pages, custom definitions with their creation times,
 * records as read (no change-log entry, no reference check), sequences, the change log's tail the
 * feed readers have not passed, and the delivery log with its attempts.
 */
import { describe, expect, test } from "bun:test";
import { assembleCatalogue } from "../../../api/model/assemble-catalogue.ts";
import { partitionOfTenant } from "../../../api/store/feed-partitions.ts";
import { UniqueViolationError } from "../../../common/errors.ts";
import { delivery } from "./delivery-log.ts";
import {
  changeEntry,
  customField,
  listAll,
  newRecord,
  seedTenant,
  tenant,
  token,
  USERS,
  user,
  webhook,
} from "./fixtures.ts";
import type { StoreUnderTest } from "./store-under-test.ts";

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function describeCopy(sut: StoreUnderTest): void {
  describe("copying a store", () => {
    test("users and tokens are read in pages in id order, revoked tokens included", async () => {
      const a = tenant("a");
      const b = tenant("b");
      const users = ["u-b", "u-a", "u-c"].map((id) => ({ ...user(a.id, id), id }));
      const tokens = ["t-2", "t-1", "t-3"].map((jti) => ({ ...token(a.id, users[0]?.id ?? ""), jti }));
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        await tx.insertTenant(b);
        for (const u of users) await tx.insertUser(u);
        await tx.insertUser({ ...user(b.id, "other"), id: "u-0" });
        for (const t of tokens) await tx.insertToken(t);
        await tx.revokeToken(a.id, "t-3", 7);
      });
      const ids = users.map((u) => u.id).toSorted(byCodePoint);
      expect((await sut.store.exportUsers(a.id, null, 2)).map((u) => u.id)).toEqual(ids.slice(0, 2));
      expect(await sut.store.exportUsers(a.id, ids[1] ?? "", 2)).toEqual(
        users.filter((u) => u.id === ids[2]),
      );
      expect(await sut.store.exportUsers(a.id, ids[2] ?? "", 2)).toEqual([]);
      const page = await sut.store.exportTokens(a.id, "t-1", 10);
      expect(page.map((t) => t.jti)).toEqual(["t-2", "t-3"]);
      expect(page[1]?.revokedAt).toBe(7);
      expect(await sut.store.exportTokens(b.id, null, 10)).toEqual([]);
    });

    test("custom definitions are copied with their creation times, tracking and version", async () => {
      const seeded = await seedTenant(sut.store);
      const { tenant: t, catalogue } = seeded;
      const extra = customField("Users", "Badge", { type: "string" });
      await sut.store.unitOfWork(async (tx) => {
        await tx.addCustomField(t.id, USERS, extra);
        await tx.setObjectTracked(t.id, catalogue.owners.id, false);
        await tx.bumpCatalogueVersion(t.id);
        await tx.bumpCatalogueVersion(t.id);
      });
      const exported = await sut.store.exportCatalogue(t.id);
      expect(exported.version).toBe(2);
      // Made in one unit of work, perhaps in one millisecond: in no particular order then.
      expect(exported.objects.map((o) => [o.object.name, o.object.tracked]).toSorted()).toEqual([
        ["Owners", false],
        ["Things", true],
      ]);
      expect(exported.fields.find((saved) => saved.field.id === extra.id)?.field).toEqual(extra);
      const target = await sut.another();
      await target.unitOfWork(async (tx) => {
        await tx.insertTenant(t);
        await tx.importCatalogue(t.id, exported);
      });
      expect(await target.exportCatalogue(t.id)).toEqual(exported);
      expect(await target.loadCustomDefinitions(t.id)).toEqual(await sut.store.loadCustomDefinitions(t.id));
      expect(await target.catalogueVersion(t.id)).toBe(2);
      await expect(
        target.unitOfWork((tx) => tx.importCatalogue(t.id, { ...exported, fields: [] })),
      ).rejects.toThrow();
    });

    test("records are imported as read: forward references, no change-log entry, sequences go on", async () => {
      const { tenant: t, user: by, catalogue } = await seedTenant(sut.store);
      const { owners, things } = catalogue;
      const parent = newRecord(owners, by.id, { Name: "parent", Code: "p" });
      // The child comes first, as a copy in UID order may write it: its parent is not there yet.
      const child = newRecord(owners, by.id, { Name: "child", Code: "c", Parent: parent.UID ?? null });
      const thing = newRecord(things, by.id, {
        Name: "every type",
        Count: -3,
        Price: "12.50",
        Flag: false,
        Day: "2024-02-29",
        At: Date.UTC(2024, 1, 29),
        Clock: "23:59:59.999",
        Kind: "Alpha",
        Tags: ["red", "blue sky"],
        Owner: parent.UID ?? null,
      });
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertRecord(t.id, owners, parent);
        await tx.insertRecord(t.id, owners, child);
        await tx.insertRecord(t.id, things, thing);
        for (let i = 0; i < 3; i++) await tx.nextSequenceValue(t.id, "JOB");
        await tx.nextSequenceValue(t.id, "JA");
      });
      const sequences = await sut.store.exportSequences(t.id);
      expect(sequences).toEqual([
        { name: "JA", value: 1 },
        { name: "JOB", value: 3 },
      ]);
      const full = assembleCatalogue(t.id, await sut.store.loadCustomDefinitions(t.id));
      const target = await sut.another();
      await target.unitOfWork(async (tx) => {
        await tx.insertTenant(t);
        await tx.importCatalogue(t.id, await sut.store.exportCatalogue(t.id));
        for (const object of full.objects) await tx.ensureObjectStorage(t.id, object);
        await tx.importRecords(t.id, owners, [child, parent]);
        await tx.importRecords(t.id, things, await listAll(sut.store, full, things));
        await tx.importRecords(t.id, things, []);
        await tx.importSequences(t.id, sequences);
        await tx.importSequences(t.id, []);
      });
      for (const object of [owners, things])
        expect(await listAll(target, full, object)).toEqual(await listAll(sut.store, full, object));
      const partitions = Array.from({ length: target.feedPartitions() }, (_, p) => p);
      for (const p of partitions) expect((await target.readChanges(p, null, 10)).entries).toEqual([]);
      expect(await target.unitOfWork((tx) => tx.nextSequenceValue(t.id, "JOB"))).toBe(4);
      const again = target.unitOfWork((tx) => tx.importRecords(t.id, things, [thing]));
      await expect(again).rejects.toBeInstanceOf(UniqueViolationError);
    });

    test("the change log's tail no reader has passed is copied in order, to each tenant's partition, as it was", async () => {
      const a = tenant("a");
      const b = tenant("b");
      const part = partitionOfTenant(a.id, sut.store.feedPartitions());
      expect(await sut.store.passedByAllReaders(part)).toBeNull();
      const first = [changeEntry(a.id, "m1", 0, 1000), changeEntry(a.id, "m1", 1, 1000)];
      const second = [{ ...changeEntry(a.id, "m2", 0, 2000), requestId: "req-2" }];
      const third = [changeEntry(a.id, "m3", 0, 3000)];
      for (const entries of [first, second, third])
        await sut.store.unitOfWork((tx) => tx.appendChanges(entries));
      const read = (await sut.store.readChanges(part, null, 10)).entries;
      // Two readers: one past the first mutation, one past the second; the copy starts after the lower.
      await sut.store.unitOfWork(async (tx) => {
        await tx.setFeedPosition("main", part, read[2]?.cursor ?? null, 1);
        await tx.setFeedPosition("behind", part, read[1]?.cursor ?? null, 1);
      });
      const passed = await sut.store.passedByAllReaders(part);
      const tail = (await sut.store.readChanges(part, passed, 10)).entries;
      expect(tail.map((entry) => entry.mutationId)).toEqual(["m2", "m3"]);

      // Into a log of its own, with another tenant's entry: each after every entry its partition holds.
      const target = await sut.another();
      const own = changeEntry(a.id, "own", 0, 500);
      const other = changeEntry(b.id, "other", 0, 600);
      await target.unitOfWork((tx) => tx.appendChanges([own]));
      const said = (entries: typeof tail) => entries.map(({ cursor, ...entry }) => entry);
      await target.unitOfWork((tx) => tx.importChanges([...said(tail), other]));
      const partitions = target.feedPartitions();
      const of = async (tenantId: string) =>
        said((await target.readChanges(partitionOfTenant(tenantId, partitions), null, 10)).entries).filter(
          (entry) => entry.tenantId === tenantId,
        );
      expect(await of(a.id)).toEqual([own, ...said(tail)]);
      expect(await of(b.id)).toEqual([other]);
      expect(await target.passedByAllReaders(partitionOfTenant(a.id, partitions))).toBeNull();
    });

    test("the delivery log is copied with every attempt, in flight or not, and its requests", async () => {
      const a = tenant("a");
      const hook = { ...webhook(a.id, "W1"), id: "w1" };
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        await tx.insertWebhook(hook);
      });
      const logged = ["d-3", "d-1", "d-2"].map((id, i) => ({
        ...delivery(a.id, "w1", `m${i}`, 1000 + i),
        id,
      }));
      await sut.store.unitOfWork((tx) => tx.insertDeliveries(logged));
      const dispatcher = await sut.dispatcherLog();
      const sent = { url: "https://r.example/h", headers: { "x-key": "{{ KEY }}" } };
      const outcome = {
        startedAt: 1500,
        durationMs: 9,
        statusCode: 503,
        responseBody: "busy",
        error: "HTTP 503",
      };
      const attempt = {
        tenantId: a.id,
        deliveryId: "d-1",
        webhookId: hook.id,
        webhookVersion: hook.version,
        request: sent,
      };
      await dispatcher.startAttempt({ ...attempt, startedAt: 1500 });
      await dispatcher.finishAttempt(a.id, "d-1", 1, outcome, "pending");
      await dispatcher.startAttempt({ ...attempt, startedAt: 1600 });
      sut.store.refreshReads();
      const all = await sut.store.exportDeliveries(a.id, null, 10);
      expect(all.map((e) => e.delivery.id)).toEqual(["d-1", "d-2", "d-3"]);
      expect(all[0]?.delivery).toMatchObject({ status: "delivering", attempts: 2 });
      expect(all[0]?.attempts).toEqual([
        { attempt: 1, ...outcome, request: sent, inFlight: false },
        expect.objectContaining({ attempt: 2, request: sent, inFlight: true }),
      ]);
      expect((await sut.store.exportDeliveries(a.id, "d-1", 1)).map((e) => e.delivery.id)).toEqual(["d-2"]);

      const target = await sut.another();
      await target.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        await tx.importDeliveries(all);
        await tx.importDeliveries([]);
      });
      expect(await target.exportDeliveries(a.id, null, 10)).toEqual(all);
      expect(await target.findDelivery(a.id, "d-1")).toEqual(all[0]?.delivery ?? null);
      await expect(target.unitOfWork((tx) => tx.importDeliveries(all.slice(0, 1)))).rejects.toThrow();
    });
  });
}
