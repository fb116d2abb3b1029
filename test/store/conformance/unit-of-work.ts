/** Conformance: units of work (commit, rollback, isolation of reads) and the engine's lifecycle. */
import { describe, expect, test } from "bun:test";
import { changeEntry, tenant, user } from "./fixtures.ts";
import type { StoreUnderTest } from "./store-under-test.ts";

export function describeUnitOfWork(sut: StoreUnderTest): void {
  describe("units of work", () => {
    test("the engine names itself and answers a ping", async () => {
      expect(sut.store.engine).toBe(sut.engine);
      expect(await sut.store.ping()).toBe(true);
    });

    test("an engine that hears commits wakes its listener for another handle's commit, and not after removal", async () => {
      const hearing = sut.store.onCommitted;
      // Left out only where the feed hears commits otherwise: on SQLite no other process commits but
      // through this store; on MongoDB the API processes' commits reach the feed's reader through the
      // Redis commit hint (api/feed/commit-broadcast.ts), and its poll catches anything else.
      if (!hearing) return expect(["sqlite", "mongodb"]).toContain(sut.engine);
      let heard = 0;
      const t = tenant("wake");
      const changeOf = (mutationId: string) => changeEntry(t.id, mutationId, 0);
      const stop = hearing.call(sut.store, () => heard++);
      const other = await sut.reopen();
      // The LISTEN is set up in the background: commit until one is heard (a hint, not a count).
      const deadline = Date.now() + 5000;
      for (let n = 0; heard === 0 && Date.now() < deadline; n++) {
        await other.unitOfWork((tx) => tx.appendChanges([changeOf(`wake-${n}`)]));
        await Bun.sleep(50);
      }
      expect(heard).toBeGreaterThan(0);
      stop();
      const before = heard;
      await other.unitOfWork((tx) => tx.appendChanges([changeOf("after")]));
      await Bun.sleep(200);
      expect(heard).toBe(before);
    });

    test("a unit of work commits everything it wrote and resolves to what its work returned", async () => {
      const a = tenant("a");
      const u = user(a.id, "ada");
      const result = await sut.store.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        await tx.insertUser(u);
        return "done";
      });
      expect(result).toBe("done");
      expect(await sut.store.findTenantById(a.id)).toEqual(a);
      expect(await sut.store.findUser(a.id, u.id)).toEqual(u);
    });

    test("a unit of work that throws keeps nothing and rethrows", async () => {
      const a = tenant("a");
      const failure = new Error("boom");
      await expect(
        sut.store.unitOfWork(async (tx) => {
          await tx.insertTenant(a);
          await tx.insertUser(user(a.id, "ada"));
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(await sut.store.findTenantById(a.id)).toBeNull();
      expect(await sut.store.listTenants()).toEqual([]);
    });

    test("a unit of work reads its own writes", async () => {
      const a = tenant("a");
      const seen = await sut.store.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        return tx.findTenantById(a.id);
      });
      expect(seen).toEqual(a);
    });

    test("reads outside a unit of work do not see its uncommitted writes", async () => {
      const a = tenant("a");
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const work = sut.store.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        await held;
      });
      await Bun.sleep(10);
      expect(await sut.store.findTenantById(a.id)).toBeNull();
      release();
      await work;
      expect(await sut.store.findTenantById(a.id)).toEqual(a);
    });

    test("a failed unit of work does not block the next", async () => {
      await sut.store.unitOfWork(async () => Promise.reject(new Error("x"))).catch(() => undefined);
      const a = tenant("a");
      await sut.store.unitOfWork((tx) => tx.insertTenant(a));
      expect(await sut.store.findTenantById(a.id)).toEqual(a);
    });

    test("a read right after a unit of work sees what it wrote", async () => {
      const a = tenant("own");
      expect(await sut.store.findTenantById(a.id)).toBeNull();
      await sut.store.unitOfWork((tx) => tx.insertTenant(a));
      expect(await sut.store.findTenantById(a.id)).toEqual(a);
    });

    test("what one handle committed, another handle reads", async () => {
      const a = tenant("a");
      await sut.store.unitOfWork((tx) => tx.insertTenant(a));
      const other = await sut.reopen();
      expect(await other.findTenantById(a.id)).toEqual(a);
    });

    // Reads may share a snapshot; each of these makes the next read see every commit finished before it.
    const freshening: [when: string, freshen: () => unknown][] = [
      ["a request arrives", () => sut.store.requestArrived()],
      ["refreshReads is called", () => sut.store.refreshReads()],
      ["a later turn of the event loop comes", () => new Promise((resolve) => setTimeout(resolve, 0))],
    ];
    for (const [when, freshen] of freshening) {
      test(`once ${when}, a read sees what another handle committed`, async () => {
        const other = await sut.reopen();
        const a = tenant(when);
        expect(await sut.store.findTenantById(a.id)).toBeNull();
        await other.unitOfWork((tx) => tx.insertTenant(a));
        await freshen();
        expect(await sut.store.findTenantById(a.id)).toEqual(a);
      });
    }

    test("close waits for the unit of work under way", async () => {
      const a = tenant("late");
      const other = await sut.reopen();
      const work = other.unitOfWork(async (tx) => {
        await Bun.sleep(20);
        await tx.insertTenant(a);
      });
      await other.close();
      await work;
      expect(await sut.store.findTenantById(a.id)).toEqual(a);
    });
  });
}
