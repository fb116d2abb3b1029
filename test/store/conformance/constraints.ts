/**
 * Conformance: constraint violations reach the domain as the port's typed
 * errors (common/errors.ts), from every engine: UniqueViolationError and
 * ReferenceNotFoundError for records, ConflictError for taken names; the
 * failed write keeps nothing.
 */
import { describe, expect, test } from "bun:test";
import type { StoreWriter } from "../../../api/store/store.ts";
import {
  ConflictError,
  ReferenceNotFoundError,
  UniqueViolationError,
  ValidationError,
} from "../../../common/errors.ts";
import { listAll, newRecord, type SeededTenant, seedTenant, tenant, user, webhook } from "./fixtures.ts";
import type { StoreUnderTest } from "./store-under-test.ts";

export function describeConstraints(sut: StoreUnderTest): void {
  describe("constraints as typed errors", () => {
    let seeded: SeededTenant;
    const write = (work: (tx: StoreWriter) => Promise<unknown>) => sut.store.unitOfWork(work);

    test("a duplicate unique value, inserted or updated to, is a UniqueViolationError and writes nothing", async () => {
      seeded = await seedTenant(sut.store);
      const { tenant: t, catalogue, user: by } = seeded;
      const { owners } = catalogue;
      const first = newRecord(owners, by.id, { Name: "first", Code: "k-1" });
      const second = newRecord(owners, by.id, { Name: "second", Code: "k-2" });
      await write(async (tx) => {
        await tx.insertRecord(t.id, owners, first);
        await tx.insertRecord(t.id, owners, second);
        // NULLs never clash.
        await tx.insertRecord(t.id, owners, newRecord(owners, by.id, { Name: "n1", Code: null }));
        await tx.insertRecord(t.id, owners, newRecord(owners, by.id, { Name: "n2", Code: null }));
      });
      const copy = newRecord(owners, by.id, { Name: "copy", Code: "k-1" });
      const inserting = write((tx) => tx.insertRecord(t.id, owners, copy));
      await expect(inserting).rejects.toBeInstanceOf(UniqueViolationError);
      await expect(inserting).rejects.toThrow("Code");
      const updating = write((tx) => tx.updateRecord(t.id, owners, second.UID as string, { Code: "k-1" }));
      await expect(updating).rejects.toBeInstanceOf(UniqueViolationError);
      // The same UID twice.
      const again = { ...newRecord(owners, by.id, { Name: "again" }), UID: first.UID as string };
      await expect(write((tx) => tx.insertRecord(t.id, owners, again))).rejects.toBeInstanceOf(
        UniqueViolationError,
      );
      // Caught inside the unit of work, the failed write has kept nothing.
      const kept = await write(async (tx) => {
        await tx.insertRecord(t.id, owners, copy).catch((error) => error);
        return tx.findRecords(t.id, owners, [copy.UID as string]);
      }).catch((error: unknown) => error);
      if (Array.isArray(kept)) expect(kept).toEqual([]);
      const codes = (await listAll(sut.store, catalogue, owners)).map((o) => o.Code);
      expect(codes.toSorted()).toEqual(["k-1", "k-2", null, null]);
      // Updating a record to the value it has is no clash.
      await write((tx) => tx.updateRecord(t.id, owners, first.UID as string, { Code: "k-1", Name: "still" }));
    });

    test("an insert unless its key is taken: written (null) when free; when taken, nothing written and the holder answered", async () => {
      const { tenant: t, catalogue, user: by } = await seedTenant(sut.store);
      const { owners } = catalogue;
      const code = owners.fields.find((field) => field.name === "Code");
      if (!code) throw new Error("the fixture's owners have a unique Code");
      const first = newRecord(owners, by.id, { Name: "first", Code: "k-1" });
      const copy = newRecord(owners, by.id, { Name: "copy", Code: "k-1" });
      const other = newRecord(owners, by.id, { Name: "other", Code: "k-2" });
      expect(await write((tx) => tx.insertUnlessTaken(t.id, owners, first, code))).toBeNull();
      // In one unit of work: the taken key writes nothing and the unit goes on (and commits).
      const answers = await write(async (tx) => [
        await tx.insertUnlessTaken(t.id, owners, copy, code),
        await tx.insertUnlessTaken(t.id, owners, other, code),
      ]);
      expect(answers).toEqual([first, null]);
      const names = (await listAll(sut.store, catalogue, owners)).map((o) => `${o.Name} ${o.Code}`);
      expect(names.toSorted()).toEqual(["first k-1", "other k-2"]);
      // Another unique value taken (the UID here) is still a UniqueViolationError.
      const sameUid = { ...newRecord(owners, by.id, { Name: "uid", Code: "k-3" }), UID: first.UID as string };
      await expect(write((tx) => tx.insertUnlessTaken(t.id, owners, sameUid, code))).rejects.toBeInstanceOf(
        UniqueViolationError,
      );
    });

    test("a reference to no record, inserted or updated to, is a ReferenceNotFoundError and writes nothing", async () => {
      seeded = await seedTenant(sut.store);
      const { tenant: t, catalogue, user: by } = seeded;
      const { owners, things } = catalogue;
      const owner = newRecord(owners, by.id, { Name: "o" });
      const thing = newRecord(things, by.id, { Name: "t", Owner: owner.UID as string });
      await write(async (tx) => {
        await tx.insertRecord(t.id, owners, owner);
        // A record written earlier in the unit of work can be referred to.
        await tx.insertRecord(t.id, things, thing);
        // A record may name itself.
        const self = newRecord(owners, by.id, { Name: "self" });
        await tx.insertRecord(t.id, owners, { ...self, Parent: self.UID as string });
      });
      const nowhere = crypto.randomUUID();
      const dangling = newRecord(things, by.id, { Name: "dangling", Owner: nowhere });
      const inserting = write((tx) => tx.insertRecord(t.id, things, dangling));
      await expect(inserting).rejects.toBeInstanceOf(ReferenceNotFoundError);
      await expect(inserting).rejects.toThrow("Owner");
      const updating = write((tx) => tx.updateRecord(t.id, things, thing.UID as string, { Owner: nowhere }));
      await expect(updating).rejects.toBeInstanceOf(ReferenceNotFoundError);
      // A reference to a standard object (CreatedBy → Users) is held to it too.
      const byNobody = newRecord(owners, crypto.randomUUID(), { Name: "by nobody" });
      await expect(write((tx) => tx.insertRecord(t.id, owners, byNobody))).rejects.toBeInstanceOf(
        ReferenceNotFoundError,
      );
      // A record of another tenant is no record of this one.
      const other = await seedTenant(sut.store, "other");
      const foreign = newRecord(other.catalogue.owners, other.user.id, { Name: "foreign" });
      await write((tx) => tx.insertRecord(other.tenant.id, other.catalogue.owners, foreign));
      await expect(
        write((tx) => tx.updateRecord(t.id, things, thing.UID as string, { Owner: foreign.UID as string })),
      ).rejects.toBeInstanceOf(ReferenceNotFoundError);

      expect((await listAll(sut.store, catalogue, things)).map((r) => [r.Name, r.Owner])).toEqual([
        ["t", owner.UID],
      ]);
      expect((await listAll(sut.store, catalogue, owners)).map((r) => r.Name).toSorted()).toEqual([
        "o",
        "self",
      ]);
    });

    test("text holding U+0000 is kept as written, or refused whole as a ValidationError naming the fields", async () => {
      seeded = await seedTenant(sut.store);
      const { tenant: t, catalogue, user: by } = seeded;
      const { things } = catalogue;
      const plain = newRecord(things, by.id, { Name: "plain" });
      await write((tx) => tx.insertRecord(t.id, things, plain));
      const nul = { Name: "a\u0000b", Tags: ["red", "x\u0000"] };
      const record = newRecord(things, by.id, nul);
      const outcome = (work: (tx: StoreWriter) => Promise<unknown>) =>
        write(work).then(
          () => null,
          (error: unknown) => error,
        );
      const inserted = await outcome((tx) => tx.insertRecord(t.id, things, record));
      const updated = await outcome((tx) => tx.updateRecord(t.id, things, plain.UID as string, nul));
      const [stored] = await sut.store.findRecords(t.id, things, [plain.UID as string]);
      const found = await sut.store.findRecords(t.id, things, [record.UID as string]);
      // Both kept, or both refused (an engine either holds U+0000 in text or does not).
      if (inserted === null) {
        expect({ updated, found, stored }).toEqual({
          updated: null,
          found: [record],
          stored: { ...plain, ...nul },
        });
        return;
      }
      for (const refused of [inserted, updated]) {
        expect(refused).toBeInstanceOf(ValidationError);
        expect((refused as ValidationError).details?.map((detail) => detail.path)).toEqual(["Name", "Tags"]);
      }
      expect({ found, stored }).toEqual({ found: [], stored: plain });
    });

    test("a taken tenant name, username or webhook name is a ConflictError", async () => {
      const a = tenant("Acme");
      const ada = user(a.id, "ada");
      const hook = webhook(a.id, "Orders");
      await write(async (tx) => {
        await tx.insertTenant(a);
        await tx.insertUser(ada);
        await tx.insertWebhook(hook);
      });
      await expect(write((tx) => tx.insertTenant(tenant("ACME")))).rejects.toBeInstanceOf(ConflictError);
      await expect(write((tx) => tx.insertUser(user(a.id, "Ada")))).rejects.toBeInstanceOf(ConflictError);
      await expect(write((tx) => tx.insertWebhook(webhook(a.id, "orders")))).rejects.toBeInstanceOf(
        ConflictError,
      );
      const other = webhook(a.id, "Invoices");
      await write((tx) => tx.insertWebhook(other));
      await expect(write((tx) => tx.replaceWebhook({ ...other, name: "ORDERS" }))).rejects.toBeInstanceOf(
        ConflictError,
      );
      expect((await sut.store.listTenants()).map((x) => x.name)).toEqual(["Acme"]);
      expect((await sut.store.listWebhooks(a.id)).map((w) => w.name).toSorted()).toEqual([
        "Invoices",
        "Orders",
      ]);
    });
  });
}
