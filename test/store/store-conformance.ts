/**
 * What every store engine must do, as one suite each engine runs
 * (sqlite-store.test.ts now; the MongoDB engine's test when it exists).
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { Store, Tenant, TokenRecord, User } from "../../api/store/store.ts";

export interface EngineHarness {
  open(): Promise<Store>;
  /** Opens a second handle on the same data (another process would), when the engine can. */
  reopen?(): Promise<Store>;
  cleanup(): Promise<void>;
}

const tenant = (name: string): Tenant => ({ id: crypto.randomUUID(), name, createdAt: Date.now() });
const user = (tenantId: string, username: string): User => ({
  id: crypto.randomUUID(),
  tenantId,
  username,
  email: `${username}@example.invalid`,
  firstName: "Ada",
  lastName: "Lovelace",
  roles: ["scheduler"],
  isActive: true,
  createdAt: Date.now(),
});
const token = (tenantId: string, userId: string): TokenRecord => ({
  jti: crypto.randomUUID(),
  tenantId,
  userId,
  roles: ["scheduler"],
  description: null,
  createdAt: Date.now(),
  expiresAt: null,
  revokedAt: null,
});

export function describeStoreConformance(engine: string, harness: EngineHarness): void {
  describe(`store conformance: ${engine}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await harness.open();
    });
    afterEach(async () => {
      await store.close();
      await harness.cleanup();
    });

    test("a unit of work commits everything it wrote", async () => {
      const a = tenant("a");
      const u = user(a.id, "ada");
      await store.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        await tx.insertUser(u);
      });
      expect(await store.findTenantById(a.id)).toEqual(a);
      expect(await store.findTenantByName("A")).toEqual(a);
      expect(await store.findUser(a.id, u.id)).toEqual(u);
      expect(await store.findUserByUsername(a.id, "ADA")).toEqual(u);
    });

    test("a unit of work that throws keeps nothing and rethrows", async () => {
      const a = tenant("a");
      const failure = new Error("boom");
      await expect(
        store.unitOfWork(async (tx) => {
          await tx.insertTenant(a);
          await tx.insertUser(user(a.id, "ada"));
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(await store.findTenantById(a.id)).toBeNull();
      expect(await store.listTenants()).toEqual([]);
    });

    test("reads outside a unit of work do not see its uncommitted writes", async () => {
      const a = tenant("a");
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const work = store.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        await held;
      });
      await Bun.sleep(10);
      expect(await store.findTenantById(a.id)).toBeNull();
      release();
      await work;
      expect(await store.findTenantById(a.id)).toEqual(a);
    });

    test("units of work run one after another, never interleaved", async () => {
      const order: string[] = [];
      const slow = store.unitOfWork(async () => {
        order.push("slow:start");
        await Bun.sleep(30);
        order.push("slow:end");
      });
      const fast = store.unitOfWork(async () => {
        order.push("fast");
      });
      await Promise.all([slow, fast]);
      expect(order).toEqual(["slow:start", "slow:end", "fast"]);
    });

    test("a failed unit of work does not block the next", async () => {
      await store.unitOfWork(async () => Promise.reject(new Error("x"))).catch(() => undefined);
      const a = tenant("a");
      await store.unitOfWork((tx) => tx.insertTenant(a));
      expect(await store.findTenantById(a.id)).toEqual(a);
    });

    test("tenant names are unique regardless of case", async () => {
      await store.unitOfWork((tx) => tx.insertTenant(tenant("Acme")));
      await expect(store.unitOfWork((tx) => tx.insertTenant(tenant("acme")))).rejects.toThrow();
      expect((await store.listTenants()).length).toBe(1);
    });

    test("tokens are scoped by tenant and revocation is recorded once", async () => {
      const a = tenant("a");
      const b = tenant("b");
      const ua = user(a.id, "ada");
      const ta = token(a.id, ua.id);
      await store.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        await tx.insertTenant(b);
        await tx.insertUser(ua);
        await tx.insertToken(ta);
      });
      expect(await store.findToken(a.id, ta.jti)).toEqual(ta);
      expect(await store.findToken(b.id, ta.jti)).toBeNull();
      expect(await store.listTokens(b.id)).toEqual([]);
      expect(await store.unitOfWork((tx) => tx.revokeToken(b.id, ta.jti, 1))).toBe(false);
      expect(await store.unitOfWork((tx) => tx.revokeToken(a.id, ta.jti, 1000))).toBe(true);
      await store.unitOfWork((tx) => tx.revokeToken(a.id, ta.jti, 2000));
      expect((await store.findToken(a.id, ta.jti))?.revokedAt).toBe(1000);
    });

    test("ping answers", async () => {
      expect(await store.ping()).toBe(true);
    });

    if (harness.reopen) {
      const reopen = harness.reopen;
      test("what one handle committed, another handle reads", async () => {
        const a = tenant("a");
        await store.unitOfWork((tx) => tx.insertTenant(a));
        const other = await reopen();
        try {
          expect(await other.findTenantById(a.id)).toEqual(a);
        } finally {
          await other.close();
        }
      });

      // Reads may share a snapshot; each of these makes the next read see every commit finished before it.
      const freshening: [when: string, freshen: () => unknown][] = [
        ["a request arrives", () => store.requestArrived()],
        ["refreshReads is called", () => store.refreshReads()],
        ["a later turn of the event loop comes", () => new Promise((resolve) => setTimeout(resolve, 0))],
      ];
      for (const [when, freshen] of freshening) {
        test(`once ${when}, a read sees what another handle committed`, async () => {
          const other = await reopen();
          try {
            const a = tenant(when);
            expect(await store.findTenantById(a.id)).toBeNull();
            await other.unitOfWork((tx) => tx.insertTenant(a));
            await freshen();
            expect(await store.findTenantById(a.id)).toEqual(a);
          } finally {
            await other.close();
          }
        });
      }
    }

    test("a read right after a unit of work sees what it wrote", async () => {
      const a = tenant("own");
      expect(await store.findTenantById(a.id)).toBeNull();
      await store.unitOfWork((tx) => tx.insertTenant(a));
      expect(await store.findTenantById(a.id)).toEqual(a);
    });
  });
}
