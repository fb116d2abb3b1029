/** Conformance: tenants, users and tokens. */
import { describe, expect, test } from "bun:test";
import { tenant, token, user } from "./fixtures.ts";
import type { StoreUnderTest } from "./store-under-test.ts";

export function describeIdentity(sut: StoreUnderTest): void {
  describe("identity", () => {
    test("tenants and users read back by id and by name, names compared without regard to case", async () => {
      const a = tenant("Acme");
      const b = { ...tenant("beta"), createdAt: a.createdAt - 1 };
      const u = user(a.id, "ada");
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        await tx.insertTenant(b);
        await tx.insertUser(u);
      });
      expect(await sut.store.findTenantById(a.id)).toEqual(a);
      expect(await sut.store.findTenantById(crypto.randomUUID())).toBeNull();
      expect(await sut.store.findTenantByName("aCME")).toEqual(a);
      expect(await sut.store.findTenantByName("gamma")).toBeNull();
      expect(await sut.store.listTenants()).toEqual([b, a]);
      expect(await sut.store.findUser(a.id, u.id)).toEqual(u);
      expect(await sut.store.findUser(b.id, u.id)).toBeNull();
      expect(await sut.store.findUserByUsername(a.id, "ADA")).toEqual(u);
      expect(await sut.store.findUserByUsername(b.id, "ada")).toBeNull();
    });

    test("tokens are scoped by tenant, listed oldest first, and revocation is recorded once", async () => {
      const a = tenant("a");
      const b = tenant("b");
      const ua = user(a.id, "ada");
      const ta = token(a.id, ua.id);
      const older = { ...token(a.id, ua.id), createdAt: ta.createdAt - 10, description: "older" };
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        await tx.insertTenant(b);
        await tx.insertUser(ua);
        await tx.insertToken(ta);
        await tx.insertToken(older);
      });
      expect(await sut.store.findToken(a.id, ta.jti)).toEqual(ta);
      expect(await sut.store.findToken(b.id, ta.jti)).toBeNull();
      expect(await sut.store.listTokens(a.id)).toEqual([older, ta]);
      expect(await sut.store.listTokens(b.id)).toEqual([]);
      expect(await sut.store.unitOfWork((tx) => tx.revokeToken(b.id, ta.jti, 1))).toBe(false);
      expect(await sut.store.unitOfWork((tx) => tx.revokeToken(a.id, ta.jti, 1000))).toBe(true);
      await sut.store.unitOfWork((tx) => tx.revokeToken(a.id, ta.jti, 2000));
      expect((await sut.store.findToken(a.id, ta.jti))?.revokedAt).toBe(1000);
    });

    test("every recorded revocation moves the store's revocation version, seen by every handle", async () => {
      const a = tenant("a");
      const ua = user(a.id, "ada");
      const [one, two] = [token(a.id, ua.id), token(a.id, ua.id)];
      await sut.store.unitOfWork(async (tx) => {
        await tx.insertTenant(a);
        await tx.insertUser(ua);
        await tx.insertToken(one);
        await tx.insertToken(two);
      });
      const other = await sut.reopen();
      expect(await sut.store.revocationVersion()).toBe(0);
      await sut.store.unitOfWork((tx) => tx.revokeToken(a.id, one.jti, 1));
      const first = await other.revocationVersion();
      expect(first).toBeGreaterThan(0);
      // No such token: nothing recorded, nothing moves.
      await sut.store.unitOfWork((tx) => tx.revokeToken(a.id, crypto.randomUUID(), 2));
      expect(await other.revocationVersion()).toBe(first);
      await other.unitOfWork((tx) => tx.revokeToken(a.id, two.jti, 3));
      sut.store.refreshReads();
      expect(await sut.store.revocationVersion()).toBeGreaterThan(first);
    });

    test("tenant names are unique regardless of case", async () => {
      await sut.store.unitOfWork((tx) => tx.insertTenant(tenant("Acme")));
      await expect(sut.store.unitOfWork((tx) => tx.insertTenant(tenant("acme")))).rejects.toThrow();
      expect((await sut.store.listTenants()).length).toBe(1);
    });
  });
}
