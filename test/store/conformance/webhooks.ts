/** Conformance: webhook definitions, their set version, and config variables. */
import { describe, expect, test } from "bun:test";
import type { ConfigVariable } from "../../../api/store/store.ts";
import { configVariable, tenant, webhook } from "./fixtures.ts";
import type { StoreUnderTest } from "./store-under-test.ts";

export function describeWebhooksAndConfig(sut: StoreUnderTest): void {
  describe("webhooks", () => {
    test("written, found by id and by name, listed oldest first, replaced, deleted; the set version grows with each", async () => {
      const a = tenant("a");
      const b = tenant("b");
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        await tx.insertTenant(b);
      });
      const version = () => sut.store.webhookSetVersion(a.id);
      expect(await version()).toBe(0);
      const later = webhook(a.id, "Later", 2000);
      const first = webhook(a.id, "First", 1000);
      await sut.store.unitOfWork((tx) => tx.insertWebhook(later));
      const afterOne = await version();
      expect(afterOne).toBeGreaterThan(0);
      await sut.store.unitOfWork((tx) => tx.insertWebhook(first));
      const afterTwo = await version();
      expect(afterTwo).toBeGreaterThan(afterOne);
      expect(await sut.store.webhookSetVersion(b.id)).toBe(0);

      expect(await sut.store.listWebhooks(a.id)).toEqual([first, later]);
      expect(await sut.store.listWebhooks(b.id)).toEqual([]);
      expect(await sut.store.findWebhook(a.id, first.id)).toEqual(first);
      expect(await sut.store.findWebhook(b.id, first.id)).toBeNull();
      expect(await sut.store.findWebhookByName(a.id, "fIRST")).toEqual(first);
      expect(await sut.store.findWebhookByName(b.id, "First")).toBeNull();

      const replaced = {
        ...first,
        name: "Renamed",
        url: "https://elsewhere.example/",
        query: "subscription { schemaOwners { operation } }",
        headers: { "x-two": "2" },
        secret: "not replaced",
        previousSecret: "not replaced either",
        previousSecretUntil: 1,
        enabled: false,
        disabledReason: "410 Gone",
        disabledAt: 2500,
        enabledBy: "user-1",
        enabledAt: 2600,
        createdAt: 1,
        updatedAt: 3000,
      };
      await sut.store.unitOfWork((tx) => tx.replaceWebhook(replaced));
      expect(await sut.store.findWebhook(a.id, first.id)).toEqual({
        ...replaced,
        secret: first.secret,
        previousSecret: null,
        previousSecretUntil: null,
        createdAt: first.createdAt,
        version: first.version + 1,
      });
      const afterReplace = await version();
      expect(afterReplace).toBeGreaterThan(afterTwo);

      // Writes that change nothing, or roll back, leave the version where it is.
      expect(await sut.store.unitOfWork((tx) => tx.deleteWebhook(b.id, first.id))).toBe(false);
      await sut.store.unitOfWork((tx) => tx.replaceWebhook({ ...replaced, id: "no such webhook" }));
      const rolledBack = sut.store.unitOfWork(async (tx) => {
        await tx.insertWebhook(webhook(a.id, "Rolled back", 4000));
        throw new Error("rolled back");
      });
      await expect(rolledBack).rejects.toThrow("rolled back");
      expect(await version()).toBe(afterReplace);

      expect(await sut.store.unitOfWork((tx) => tx.deleteWebhook(a.id, first.id))).toBe(true);
      const afterDelete = await version();
      expect(afterDelete).toBeGreaterThan(afterReplace);
      expect(await sut.store.unitOfWork((tx) => tx.deleteWebhook(a.id, first.id))).toBe(false);
      expect(await version()).toBe(afterDelete);
      expect(await sut.store.listWebhooks(a.id)).toEqual([later]);
    });

    test("every kind keeps its type and options, inserted and replaced into another kind", async () => {
      const a = tenant("a");
      await sut.store.unitOfWork((tx) => tx.insertTenant(a));
      const deferred = {
        ...webhook(a.id, "Deferred", 1000),
        type: "graphql_deferred" as const,
        query: "subscription { things { UID } }",
        options: { field: "Due", offset: { field: "Lead", default: 60_000 }, filter: "Name != 'x'" },
      };
      const scheduled = {
        ...webhook(a.id, "Scheduled", 2000),
        type: "scheduled" as const,
        query: "",
        options: { cron: "*/5 * * * *" },
      };
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertWebhook(deferred);
        await tx.insertWebhook(scheduled);
      });
      expect(await sut.store.listWebhooks(a.id)).toEqual([deferred, scheduled]);
      const nowGraphql = { ...deferred, type: "graphql" as const, options: null, updatedAt: 3000 };
      const nowDeferred = { ...scheduled, ...deferred, id: scheduled.id, name: "Scheduled", updatedAt: 3000 };
      await sut.store.unitOfWork(async (tx) => {
        await tx.replaceWebhook(nowGraphql);
        await tx.replaceWebhook(nowDeferred);
      });
      expect(await sut.store.findWebhook(a.id, deferred.id)).toEqual({ ...nowGraphql, version: 2 });
      expect(await sut.store.findWebhook(a.id, scheduled.id)).toEqual({
        ...nowDeferred,
        createdAt: scheduled.createdAt,
        version: 2,
      });
    });

    test("the dispatcher's disable (410 Gone) moves the set version too, in its own process's write; a missing webhook moves nothing", async () => {
      const a = tenant("a");
      const b = tenant("b");
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        await tx.insertTenant(b);
      });
      const hook = webhook(a.id, "Gone", 1000);
      await sut.store.unitOfWork((tx) => tx.insertWebhook(hook));
      const before = await sut.store.webhookSetVersion(a.id);

      const dispatcher = await sut.dispatcherLog();
      await dispatcher.disableWebhook(a.id, hook.id, "410 Gone", 5000);
      sut.store.refreshReads();
      expect(await sut.store.webhookSetVersion(a.id)).toBeGreaterThan(before);
      expect(await sut.store.findWebhook(a.id, hook.id)).toEqual({
        ...hook,
        enabled: false,
        disabledReason: "410 Gone",
        disabledAt: 5000,
        version: hook.version + 1,
        updatedAt: 5000,
      });
      const disabled = await sut.store.webhookSetVersion(a.id);

      await dispatcher.disableWebhook(a.id, "no such webhook", "410 Gone", 6000);
      await dispatcher.disableWebhook(b.id, hook.id, "410 Gone", 6000);
      sut.store.refreshReads();
      expect(await sut.store.webhookSetVersion(a.id)).toBe(disabled);
      expect(await sut.store.webhookSetVersion(b.id)).toBe(0);
    });
  });

  describe("webhook secret rotation", () => {
    test("sets the secret and the previous one with its end, moves the versions; another tenant's or a missing webhook: false, nothing moves", async () => {
      const a = tenant("a");
      const b = tenant("b");
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        await tx.insertTenant(b);
      });
      const hook = webhook(a.id, "Rotated", 1000);
      await sut.store.unitOfWork((tx) => tx.insertWebhook(hook));
      const before = await sut.store.webhookSetVersion(a.id);
      const rotation = {
        secret: "sealed:new",
        previousSecret: hook.secret,
        previousSecretUntil: 9000,
        at: 2000,
      };
      expect(await sut.store.unitOfWork((tx) => tx.rotateWebhookSecret(a.id, hook.id, rotation))).toBe(true);
      expect(await sut.store.findWebhook(a.id, hook.id)).toEqual({
        ...hook,
        secret: "sealed:new",
        previousSecret: hook.secret,
        previousSecretUntil: 9000,
        version: hook.version + 1,
        updatedAt: 2000,
      });
      const rotated = await sut.store.webhookSetVersion(a.id);
      expect(rotated).toBeGreaterThan(before);
      expect(await sut.store.unitOfWork((tx) => tx.rotateWebhookSecret(b.id, hook.id, rotation))).toBe(false);
      expect(await sut.store.unitOfWork((tx) => tx.rotateWebhookSecret(a.id, "missing", rotation))).toBe(
        false,
      );
      expect(await sut.store.webhookSetVersion(a.id)).toBe(rotated);
      expect(await sut.store.webhookSetVersion(b.id)).toBe(0);
    });
  });

  describe("config variables", () => {
    test("put (created, then replaced keeping its creation time), found by exact key, listed by key, deleted", async () => {
      const a = tenant("a");
      const b = tenant("b");
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        await tx.insertTenant(b);
      });
      const keys = ["b", "B", "a_1", "A"];
      await sut.store.unitOfWork(async (tx) => {
        for (const key of keys) await tx.putConfigVariable(configVariable(a.id, key, `value of ${key}`));
      });
      expect((await sut.store.listConfigVariables(a.id)).map((v) => v.key)).toEqual(["A", "B", "a_1", "b"]);
      expect(await sut.store.listConfigVariables(b.id)).toEqual([]);
      expect(await sut.store.findConfigVariable(a.id, "B")).toEqual(configVariable(a.id, "B", "value of B"));
      expect(await sut.store.findConfigVariable(a.id, "c")).toBeNull();
      expect(await sut.store.findConfigVariable(b.id, "B")).toBeNull();

      const secret: ConfigVariable = {
        ...configVariable(a.id, "B", "sealed:new", 5000),
        configType: "secret",
        description: "now a secret",
      };
      await sut.store.unitOfWork((tx) => tx.putConfigVariable(secret));
      expect(await sut.store.findConfigVariable(a.id, "B")).toEqual({ ...secret, createdAt: 1000 });

      expect(await sut.store.unitOfWork((tx) => tx.deleteConfigVariable(b.id, "B"))).toBe(false);
      expect(await sut.store.unitOfWork((tx) => tx.deleteConfigVariable(a.id, "B"))).toBe(true);
      expect(await sut.store.unitOfWork((tx) => tx.deleteConfigVariable(a.id, "B"))).toBe(false);
      expect((await sut.store.listConfigVariables(a.id)).map((v) => v.key)).toEqual(["A", "a_1", "b"]);
    });
  });
}
