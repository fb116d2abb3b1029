/**
 * The storage names definitions take (pure: defineObject, defineAddedField): derived from the name,
 * and refused when they would name storage another definition has, as PostgreSQL reads a name (its
 * first 63 bytes) or SQLite does (without regard to case).
 */
import { describe, expect, test } from "bun:test";
import { defineAddedField, defineObject } from "../../api/catalogue/define-object.ts";
import type { Catalogue, ObjectDef } from "../../api/model/catalogue.ts";
import { makeField } from "../../api/model/field-factory.ts";
import { STANDARD_OBJECTS } from "../../api/model/standard-objects.ts";
import { ConflictError } from "../../common/errors.ts";

const LIMITS = { maxFieldsPerObject: 10 };
const catalogueOf = (objects: readonly ObjectDef[]): Catalogue => ({
  tenantId: "t",
  version: 1,
  objects: [...objects],
});
const int = { type: "int" };

/** A custom object as saved before mappings were shortened: `__` and all 64 characters, 66 bytes. */
const savedLong: ObjectDef = {
  id: "00000000-0000-4000-8000-000000000001",
  name: "P".repeat(64),
  label: "P",
  description: null,
  mapping: `__${"p".repeat(64)}`,
  custom: true,
  tracked: true,
  fields: [],
};

describe("defineObject", () => {
  test("a name that fits is mapped as it always was", () => {
    const object = defineObject(catalogueOf(STANDARD_OBJECTS), { name: "Short", fields: [] }, LIMITS);
    expect(object.mapping).toBe("__short");
  });

  test("a long name takes a shortened mapping of 63 bytes", () => {
    const object = defineObject(catalogueOf(STANDARD_OBJECTS), { name: "P".repeat(64), fields: [] }, LIMITS);
    expect(object.mapping).toMatch(/^___p{51}_[0-9a-f]{8}$/);
  });

  test("a name whose mapping is the 63 bytes PostgreSQL kept of a saved long one is refused: 409", () => {
    const catalogue = catalogueOf([...STANDARD_OBJECTS, savedLong]);
    const define = () => defineObject(catalogue, { name: "P".repeat(61), fields: [] }, LIMITS);
    expect(define).toThrow(ConflictError);
    expect(define).toThrow(`where the object '${savedLong.name}' is stored`);
  });
});

describe("defineAddedField", () => {
  const contacts = STANDARD_OBJECTS.find((object) => object.name === "Contacts") as ObjectDef;
  const savedField = {
    ...makeField("Contacts", "G".repeat(64), { type: "int", custom: true }),
    mapping: `__${"g".repeat(64)}`,
  };
  const catalogue = catalogueOf(
    STANDARD_OBJECTS.map((object) =>
      object === contacts ? { ...object, fields: [...object.fields, savedField] } : object,
    ),
  );

  test("a name that fits is mapped as it always was; a long one is shortened", () => {
    const add = (name: string) =>
      defineAddedField(catalogue, { schemaName: "Contacts", name, column: int }, LIMITS).field.mapping;
    expect(add("Nickname")).toBe("__nickname");
    expect(add(`${"G".repeat(63)}H`)).toMatch(/^___g{51}_[0-9a-f]{8}$/);
  });

  test("a name whose mapping is the 63 bytes PostgreSQL kept of a saved long one is refused: 409", () => {
    const add = () =>
      defineAddedField(catalogue, { schemaName: "Contacts", name: "G".repeat(61), column: int }, LIMITS);
    expect(add).toThrow(ConflictError);
    expect(add).toThrow(`where the field 'Contacts.${savedField.name}' is stored`);
  });
});
