/**
 * Conformance: custom definitions, their version, and record storage (the
 * port's DDL): idempotent storage changes, and a unit of work that throws
 * leaves neither definitions nor storage behind.
 */
import { describe, expect, test } from "bun:test";
import { prepareFilter } from "../../../api/eql/check-filter.ts";
import type { FieldDef, ObjectDef } from "../../../api/model/catalogue.ts";
import type { FieldSpec } from "../../../api/model/field-factory.ts";
import { defaultRecordValue } from "../../../api/model/field-values.ts";
import type { RecordValues } from "../../../api/model/record-values.ts";
import type { StoreWriter } from "../../../api/store/store.ts";
import { ConflictError } from "../../../common/errors.ts";
import {
  customField,
  customObject,
  listAll,
  newRecord,
  type SeededTenant,
  seedTenant,
  USERS,
} from "./fixtures.ts";
import type { StoreUnderTest } from "./store-under-test.ts";

const rolledBack = new Error("rolled back on purpose");

/** A default of every type a default may have, as text that needs quoting where text can. */
const DEFAULTS: Record<string, FieldSpec> = {
  Note: { type: "string", defaultValue: `it's \\ "quoted" ✓` },
  Body: { type: "textarea", defaultValue: "line one\nline two" },
  Site: { type: "url", defaultValue: "https://example.com/?q='x'" },
  Size: { type: "int", defaultValue: -5 },
  Price: { type: "decimal", precision: 18, scale: 2, defaultValue: "12.5" },
  Off: { type: "boolean", defaultValue: false },
  On: { type: "boolean", defaultValue: true },
  Day: { type: "date", defaultValue: "2024-02-29" },
  At: { type: "datetime", defaultValue: Date.UTC(2024, 4, 1, 12, 30) },
  Clock: { type: "time", defaultValue: "10:30:00.000" },
  Kind: { type: "picklist", items: ["Small", "Large"], defaultValue: "Large" },
  Tags: { type: "multipicklist", items: ["red", "green", "blue"], defaultValue: "red;blue" },
};

export function describeCatalogue(sut: StoreUnderTest): void {
  describe("catalogue", () => {
    let seeded: SeededTenant;
    const tenantId = () => seeded.tenant.id;
    /** Runs `work`, then throws: the unit of work must keep nothing of it. */
    const thenThrow = (work: (tx: StoreWriter) => Promise<unknown>) =>
      expect(
        sut.store.unitOfWork(async (tx) => {
          await work(tx);
          throw rolledBack;
        }),
      ).rejects.toBe(rolledBack);
    const definitions = async () => {
      const loaded = await sut.store.loadCustomDefinitions(tenantId());
      return {
        version: loaded.version,
        // Definitions made in the same millisecond come in no particular order.
        objects: loaded.objects.map((o) => `${o.name}${o.tracked ? "" : " (untracked)"}`).toSorted(),
        fields: loaded.fields.map((f) => `${f.objectName}.${f.name}`).toSorted(),
      };
    };
    const shelves = () => customObject("Shelves", { Label: { type: "string", unique: true } });

    test("definitions and the version read back; objects without fields, custom fields of every object", async () => {
      seeded = await seedTenant(sut.store);
      expect(await sut.store.catalogueVersion(tenantId())).toBe(0);
      expect(await definitions()).toEqual({
        version: 0,
        objects: ["Owners", "Things"],
        fields: [seeded.catalogue.owners, seeded.catalogue.things]
          .flatMap((o) => o.fields.filter((f) => f.custom).map((f) => `${o.name}.${f.name}`))
          .toSorted(),
      });
      const loaded = await sut.store.loadCustomDefinitions(tenantId());
      const { owners } = seeded.catalogue;
      expect(loaded.objects.find((o) => o.name === "Owners")).toEqual({ ...owners, fields: [] });
      const name = owners.fields.find((f) => f.name === "Name");
      expect(loaded.fields.find((f) => f.id === name?.id)).toEqual(name as FieldDef);

      expect(await sut.store.unitOfWork((tx) => tx.bumpCatalogueVersion(tenantId()))).toBe(1);
      expect(await sut.store.unitOfWork((tx) => tx.bumpCatalogueVersion(tenantId()))).toBe(2);
      expect(await sut.store.catalogueVersion(tenantId())).toBe(2);
      expect((await sut.store.loadCustomDefinitions(tenantId())).version).toBe(2);

      expect(await sut.store.unitOfWork((tx) => tx.setObjectTracked(tenantId(), owners.id, false))).toBe(
        true,
      );
      expect(
        await sut.store.unitOfWork((tx) => tx.setObjectTracked(tenantId(), crypto.randomUUID(), false)),
      ).toBe(false);
      expect((await definitions()).objects).toEqual(["Owners (untracked)", "Things"]);
    });

    test("a name taken by an object, or by a field of the object, is a ConflictError", async () => {
      seeded = await seedTenant(sut.store);
      const clash = customObject("OWNERS", {});
      await expect(
        sut.store.unitOfWork((tx) => tx.createCustomObject(tenantId(), clash)),
      ).rejects.toBeInstanceOf(ConflictError);
      const { owners } = seeded.catalogue;
      const twice = customField("Owners", "name", { type: "string" });
      await expect(
        sut.store.unitOfWork((tx) => tx.addCustomField(tenantId(), owners, twice)),
      ).rejects.toBeInstanceOf(ConflictError);
      expect((await definitions()).objects).toEqual(["Owners", "Things"]);
    });

    test("an object's records follow its fields: added with their default, deleted with their values", async () => {
      seeded = await seedTenant(sut.store);
      const object = shelves();
      await sut.store.unitOfWork((tx) => tx.createCustomObject(tenantId(), object));
      const record = newRecord(object, seeded.user.id, { Label: "top" });
      await sut.store.unitOfWork((tx) => tx.insertRecord(tenantId(), object, record));
      const depth = customField("Shelves", "Depth", { type: "int", defaultValue: 30 });
      const withDepth: ObjectDef = { ...object, fields: [...object.fields, depth] };
      await sut.store.unitOfWork((tx) => tx.addCustomField(tenantId(), object, depth));
      expect(await listAll(sut.store, seeded.catalogue, withDepth)).toEqual([{ ...record, Depth: 30 }]);
      expect((await definitions()).fields).toContain("Shelves.Depth");

      await sut.store.unitOfWork((tx) => tx.deleteCustomField(tenantId(), withDepth, depth));
      expect(await listAll(sut.store, seeded.catalogue, object)).toEqual([record]);
      expect((await definitions()).fields).not.toContain("Shelves.Depth");

      await sut.store.unitOfWork((tx) => tx.deleteCustomObject(tenantId(), object));
      expect(await definitions()).toMatchObject({ objects: ["Owners", "Things"] });
      expect((await definitions()).fields.filter((f) => f.startsWith("Shelves."))).toEqual([]);
      // Created again, it starts empty: nothing of the old records or storage is left.
      await sut.store.unitOfWork((tx) => tx.createCustomObject(tenantId(), object));
      expect(await listAll(sut.store, seeded.catalogue, object)).toEqual([]);
    });

    test("a field added with a default gives it to the records there, of every type; later records keep what they are given", async () => {
      seeded = await seedTenant(sut.store);
      const object = shelves();
      await sut.store.unitOfWork((tx) => tx.createCustomObject(tenantId(), object));
      const before = newRecord(object, seeded.user.id, { Label: "before" });
      await sut.store.unitOfWork((tx) => tx.insertRecord(tenantId(), object, before));
      const added = Object.entries(DEFAULTS).map(([name, spec]) => customField("Shelves", name, spec));
      for (const field of added)
        await sut.store.unitOfWork((tx) => tx.addCustomField(tenantId(), object, field));
      const grown: ObjectDef = { ...object, fields: [...object.fields, ...added] };
      const defaults = Object.fromEntries(added.map((field) => [field.name, defaultRecordValue(field)]));
      // Written after, with every added field null: the default is not the column's for a new record.
      const after = newRecord(grown, seeded.user.id, { Label: "after" });
      await sut.store.unitOfWork((tx) => tx.insertRecord(tenantId(), grown, after));
      const byLabel = (records: RecordValues[]) =>
        records.toSorted((a, b) => String(a.Label).localeCompare(String(b.Label)));
      expect(byLabel(await listAll(sut.store, seeded.catalogue, grown))).toEqual([
        after,
        { ...before, ...defaults },
      ]);
      // Filters see the defaults as stored values.
      for (const text of [
        "Note LIKE 'it%'",
        "Size == -5",
        "Off == false AND On == true",
        "Tags INCLUDES ['blue']",
      ]) {
        const filter = prepareFilter(text, grown, seeded.catalogue);
        expect({ text, count: await sut.store.countRecords(tenantId(), grown, filter, Date.now()) }).toEqual({
          text,
          count: 1,
        });
      }
    });

    test("storage changes are idempotent: creating what exists and dropping what is gone change nothing", async () => {
      seeded = await seedTenant(sut.store);
      const mood = customField("Users", "Mood", { type: "picklist", items: ["calm"], defaultValue: "calm" });
      const usersWithMood: ObjectDef = { ...USERS, fields: [...USERS.fields, mood] };
      await sut.store.unitOfWork(async (tx) => {
        await tx.ensureObjectStorage(tenantId(), USERS);
        await tx.ensureObjectStorage(tenantId(), usersWithMood);
        await tx.ensureObjectStorage(tenantId(), usersWithMood);
      });
      // The existing Users record got the new field's default.
      expect((await listAll(sut.store, seeded.catalogue, usersWithMood)).map((u) => u.Mood)).toEqual([
        "calm",
      ]);
      // Its storage exists already: adding the field saves the definition and leaves the values as they are.
      await sut.store.unitOfWork((tx) =>
        tx.updateRecord(tenantId(), usersWithMood, seeded.user.id, { Mood: null }),
      );
      await sut.store.unitOfWork((tx) => tx.addCustomField(tenantId(), USERS, mood));
      expect((await definitions()).fields).toContain("Users.Mood");
      expect((await listAll(sut.store, seeded.catalogue, usersWithMood)).map((u) => u.Mood)).toEqual([null]);

      await sut.store.unitOfWork((tx) => tx.deleteCustomField(tenantId(), usersWithMood, mood));
      await sut.store.unitOfWork((tx) => tx.deleteCustomField(tenantId(), usersWithMood, mood));
      const object = shelves();
      await sut.store.unitOfWork((tx) => tx.createCustomObject(tenantId(), object));
      await sut.store.unitOfWork((tx) => tx.deleteCustomObject(tenantId(), object));
      await sut.store.unitOfWork((tx) => tx.deleteCustomObject(tenantId(), object));
      expect(await definitions()).toMatchObject({ objects: ["Owners", "Things"] });
      expect((await definitions()).fields).not.toContain("Users.Mood");
    });

    test("names agreeing in their first 63 characters get storage of their own: objects, and fields of one", async () => {
      seeded = await seedTenant(sut.store);
      // PostgreSQL keeps 63 bytes of an identifier: these once named one table, and one column.
      const [g, h] = ["G".repeat(64), `${"G".repeat(63)}H`];
      const first = customObject("P".repeat(64), { [g]: { type: "int" }, [h]: { type: "int" } });
      const second = customObject(`${"P".repeat(63)}X`, { [g]: { type: "int" } });
      await sut.store.unitOfWork(async (tx) => {
        await tx.createCustomObject(tenantId(), first);
        await tx.createCustomObject(tenantId(), second);
      });
      const record = newRecord(first, seeded.user.id, { [g]: 1, [h]: 2 });
      await sut.store.unitOfWork((tx) => tx.insertRecord(tenantId(), first, record));
      expect(await listAll(sut.store, seeded.catalogue, first)).toEqual([record]);
      expect(await listAll(sut.store, seeded.catalogue, second)).toEqual([]);
    });

    test("a unit of work that creates an object, writes to it and throws leaves neither definition nor storage", async () => {
      seeded = await seedTenant(sut.store);
      const before = await definitions();
      const object = shelves();
      await thenThrow(async (tx) => {
        await tx.createCustomObject(tenantId(), object);
        await tx.insertRecord(tenantId(), object, newRecord(object, seeded.user.id, { Label: "left over?" }));
        await tx.bumpCatalogueVersion(tenantId());
      });
      expect(await definitions()).toEqual(before);
      // Nothing in the way of defining it again, and nothing of the first try in it.
      await sut.store.unitOfWork((tx) => tx.createCustomObject(tenantId(), object));
      expect(await listAll(sut.store, seeded.catalogue, object)).toEqual([]);
      const record = newRecord(object, seeded.user.id, { Label: "left over?" });
      await sut.store.unitOfWork((tx) => tx.insertRecord(tenantId(), object, record));
      expect(await listAll(sut.store, seeded.catalogue, object)).toEqual([record]);
    });

    test("a unit of work that adds a field and throws leaves neither its definition nor its storage", async () => {
      seeded = await seedTenant(sut.store);
      const { owners } = seeded.catalogue;
      const owner = newRecord(owners, seeded.user.id, { Name: "o" });
      await sut.store.unitOfWork((tx) => tx.insertRecord(tenantId(), owners, owner));
      const before = await definitions();
      const rank = customField("Owners", "Rank", { type: "int", defaultValue: 7 });
      const ranked: ObjectDef = { ...owners, fields: [...owners.fields, rank] };
      await thenThrow(async (tx) => {
        await tx.addCustomField(tenantId(), owners, rank);
        await tx.updateRecord(tenantId(), ranked, owner.UID as string, { Rank: 99 });
      });
      expect(await definitions()).toEqual(before);
      // Added for real, the existing record gets the default: the rolled-back value is gone with its storage.
      await sut.store.unitOfWork((tx) => tx.addCustomField(tenantId(), owners, rank));
      expect(await listAll(sut.store, seeded.catalogue, ranked)).toEqual([{ ...owner, Rank: 7 }]);
    });

    test("a unit of work that deletes an object or a field and throws keeps them, records and values", async () => {
      seeded = await seedTenant(sut.store);
      const { owners } = seeded.catalogue;
      const owner = newRecord(owners, seeded.user.id, { Name: "kept", Score: 3 });
      await sut.store.unitOfWork((tx) => tx.insertRecord(tenantId(), owners, owner));
      const before = await definitions();
      const score = owners.fields.find((f) => f.name === "Score");
      if (!score) throw new Error("Owners has no Score");
      await thenThrow((tx) => tx.deleteCustomField(tenantId(), owners, score));
      await thenThrow((tx) => tx.deleteCustomObject(tenantId(), owners));
      expect(await definitions()).toEqual(before);
      expect(await listAll(sut.store, seeded.catalogue, owners)).toEqual([owner]);
    });
  });
}
