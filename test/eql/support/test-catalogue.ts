/** A small catalogue for filter tests: `Things` with one field of every type, referencing `Owners` (which reference themselves). */
import type { Catalogue, ObjectDef } from "../../../api/model/catalogue.ts";
import { findObject } from "../../../api/model/catalogue.ts";
import { standardObject } from "../../../api/model/field-factory.ts";

export const KIND_ITEMS = ["Alpha", "beta", "Ga mma", "Dé'lta", "100%_x"];
export const TAG_ITEMS = ["red", "Green", "blue sky", "ünï"];

const owners = standardObject("Owners", "Owner", {
  Name: { type: "string" },
  Score: { type: "int" },
  Rank: { type: "decimal" },
  Parent: { type: "reference", referenceTo: "Owners", reverseName: "Children" },
});

const things = standardObject("Things", "Thing", {
  Name: { type: "string" },
  Note: { type: "textarea" },
  Link: { type: "url" },
  Count: { type: "int" },
  Minutes: { type: "duration" },
  Price: { type: "decimal" },
  Flag: { type: "boolean" },
  Day: { type: "date" },
  At: { type: "datetime" },
  Clock: { type: "time" },
  Kind: { type: "picklist", items: KIND_ITEMS },
  Tags: { type: "multipicklist", items: TAG_ITEMS },
  Owner: { type: "reference", referenceTo: "Owners", reverseName: "Things" },
  Backup: { type: "reference", referenceTo: "Owners", reverseName: "BackedUp" },
});

const users = standardObject("Users", "User", { LastName: { type: "string" } });

export const TEST_CATALOGUE: Catalogue = { tenantId: "t1", version: 1, objects: [things, owners, users] };

/** The object named `name` in the test catalogue. */
export function testObject(name: string): ObjectDef {
  const object = findObject(TEST_CATALOGUE, name);
  if (!object) throw new Error(`no test object ${name}`);
  return object;
}
