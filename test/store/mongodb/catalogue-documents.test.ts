/**
 * A tenant's custom definitions ↔ the documents of `custom_objects` and `custom_fields` on the
 * MongoDB engine (api/store/mongodb/catalogue/catalogue-documents.ts), pure: round trips through
 * the driver's BSON serializer (what a read returns), and the reads' filter and order run by
 * mingo, an independent interpreter of MongoDB's query language, over documents of two tenants.
 * mingo stands in for the server because none can run on the machines this is written on; it
 * does not prove that the unique indexes refuse a second name (the server's, declared in
 * layout.ts: this file proves the keys they hold fold names as the other engines do), nor
 * anything of transactions or concurrency.
 */

import { describe, expect, test } from "bun:test";
import { Query } from "mingo";
import { BSON, type Document } from "mongodb";
import type { FieldDef, ObjectDef } from "../../../api/model/catalogue.ts";
import { STANDARD_OBJECTS } from "../../../api/model/standard-objects.ts";
import {
  type CustomFieldDocument,
  type CustomObjectDocument,
  DEFINITION_ORDER,
  fieldDocument,
  importDocuments,
  objectDocument,
  savedFieldOf,
  savedObjectOf,
  tenantDefinitions,
} from "../../../api/store/mongodb/catalogue/catalogue-documents.ts";
import type { CatalogueExport } from "../../../api/store/ports/catalogue-port.ts";
import { ValidationError } from "../../../common/errors.ts";
import { foldAsciiCase } from "../../../common/store/mongodb/fold-ascii-case.ts";
import { customField, customObject, testCatalogue, USERS } from "../conformance/fixtures.ts";

const TENANT = "tenant-a";
const roundTrip = <T>(document: T): T => BSON.deserialize(BSON.serialize(document as Document)) as T;

const { owners, things } = testCatalogue(TENANT);
const customFields = (object: ObjectDef) => object.fields.filter((field) => field.custom);
const mood = customField("Users", "Mood", {
  type: "picklist",
  items: ["calm", "cross"],
  defaultValue: "calm",
});
const rank = customField("Owners", "Rank", { type: "int", defaultValue: -7 });
const since = customField("Things", "Since", { type: "datetime", defaultValue: 1_700_000_000_123 });
const price = customField("Things", "Cost", {
  type: "decimal",
  precision: 38,
  scale: 4,
  defaultValue: "1.0625",
});

describe("definitions as documents, and back", () => {
  test("a custom object reads back as saved: its definition, fields empty, tracking as set, its creation time", () => {
    for (const object of [owners, { ...things, tracked: false, description: "all types" }]) {
      const saved = savedObjectOf(roundTrip(objectDocument(TENANT, object, 1_700_000_000_001)));
      expect(saved).toEqual({ object: { ...object, fields: [] }, createdAt: 1_700_000_000_001 });
    }
  });

  test("a custom field of every type reads back as saved, its default and items included", () => {
    const all = [...customFields(owners), ...customFields(things), mood, rank, since, price];
    for (const field of all) {
      const saved = savedFieldOf(roundTrip(fieldDocument(TENANT, "object-id", field, 42)));
      expect(saved).toEqual({ field, createdAt: 42 });
    }
  });

  test("the documents hold the layout's fields: _id, t, nameKey, createdAt (and a field's object id in o)", () => {
    const object = objectDocument(TENANT, owners, 1);
    expect(object).toMatchObject({
      _id: owners.id,
      t: TENANT,
      nameKey: "owners",
      tracked: true,
      createdAt: 1,
    });
    expect(Object.keys(object)).not.toContain("fields");
    expect(Object.keys(object)).not.toContain("id");
    const field = fieldDocument(TENANT, USERS.id, mood, 2);
    expect(field).toMatchObject({
      _id: mood.id,
      t: TENANT,
      o: USERS.id,
      nameKey: "mood",
      objectName: "Users",
    });
    expect(Object.keys(field)).not.toContain("id");
  });
});

describe("names are unique regardless of ASCII case: the key the unique indexes hold", () => {
  test.each([
    ["Owners", "owners"],
    ["OWNERS", "owners"],
    ["owners", "owners"],
    ["Shelf_2B", "shelf_2b"],
    // Only ASCII letters fold, as SQLite's NOCASE and PostgreSQL's lower() under the C collation do.
    ["Ärger", "Ärger"],
    ["ÄRGER", "Ärger"],
    ["\u212Aelvin", "\u212Aelvin"],
    ["İd", "İd"],
  ])("%s → %s", (name, key) => {
    expect(foldAsciiCase(name)).toBe(key);
  });

  test("an object named like another but for ASCII case has its key; one differing beyond ASCII does not", () => {
    const key = (name: string) => objectDocument(TENANT, customObject(name, {}), 1).nameKey;
    expect(key("OWNERS")).toBe(key("Owners"));
    expect(key("Übung")).not.toBe(key("übung"));
    const fieldKey = (name: string) =>
      fieldDocument(TENANT, "o", customField("X", name, { type: "int" }), 1).nameKey;
    expect(fieldKey("name")).toBe(fieldKey("Name"));
  });
});

describe("a tenant's definitions as the reads list them", () => {
  const objectDocs = (tenantId: string, createdAt: number[], ids: string[]) =>
    createdAt.map((at, i) =>
      roundTrip(objectDocument(tenantId, { ...owners, id: ids[i] as string, name: `O${i}` }, at)),
    );

  test("the tenant's only, oldest first, ties by id", () => {
    const mine = objectDocs(TENANT, [30, 10, 20, 10], ["d", "c", "a", "b"]);
    const theirs = objectDocs("tenant-b", [5, 15], ["e", "f"]);
    const listed = new Query(tenantDefinitions(TENANT))
      .find<CustomObjectDocument>([...theirs, ...mine])
      .sort(DEFINITION_ORDER)
      .all();
    expect(listed.map((document) => [document.createdAt, document._id])).toEqual([
      [10, "b"],
      [10, "c"],
      [20, "a"],
      [30, "d"],
    ]);
  });
});

describe("an exported catalogue imported", () => {
  const exported: CatalogueExport = {
    version: 4,
    objects: [
      { object: { ...owners, fields: [] }, createdAt: 100 },
      { object: { ...things, fields: [], tracked: false }, createdAt: 200 },
    ],
    fields: [
      ...customFields(owners).map((field) => ({ field, createdAt: 100 })),
      { field: mood, createdAt: 150 },
      ...customFields(things).map((field) => ({ field, createdAt: 200 })),
    ],
  };

  test("each field names its object by id: an exported object's, or a standard object's", () => {
    const { fields } = importDocuments(TENANT, exported, STANDARD_OBJECTS);
    const objectIdOf = (field: FieldDef) => fields.find((document) => document._id === field.id)?.o;
    expect(objectIdOf(mood)).toBe(USERS.id);
    for (const field of customFields(owners)) expect(objectIdOf(field)).toBe(owners.id);
    for (const field of customFields(things)) expect(objectIdOf(field)).toBe(things.id);
  });

  test("saved as exported: ids, creation times and tracking read back alike", () => {
    const documents = roundTrip(importDocuments(TENANT, exported, STANDARD_OBJECTS));
    expect({
      version: exported.version,
      objects: documents.objects.map(savedObjectOf),
      fields: (documents.fields as CustomFieldDocument[]).map(savedFieldOf),
    }).toEqual(exported);
    expect(documents.objects.every((document) => document.t === TENANT)).toBe(true);
  });

  test("a field naming no object is refused before anything is written", () => {
    const orphan = customField("Gone", "Left", { type: "string" });
    const broken = { ...exported, fields: [...exported.fields, { field: orphan, createdAt: 1 }] };
    expect(() => importDocuments(TENANT, broken, STANDARD_OBJECTS)).toThrow(ValidationError);
  });
});
