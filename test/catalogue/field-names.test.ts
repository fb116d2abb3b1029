/** Field names must stay usable in filters: the filter language's reserved words are refused as names. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseFilter } from "../../api/eql/parse-filter.ts";
import { EQL_RESERVED_WORDS, isReservedWord } from "../../api/eql/reserved-words.ts";
import { STANDARD_OBJECTS } from "../../api/model/standard-objects.ts";
import { FilterParseError } from "../../common/errors.ts";
import { createTestApp, type ProvisionedTenant, type TestApp } from "../support/app.ts";
import { graphqlClient } from "../support/graphql.ts";

let t: TestApp;
let acme: ProvisionedTenant;
beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: "error" });
  acme = await t.provision("acme");
});
afterAll(() => t.close());

const admin = (method: string, path: string, body?: unknown) =>
  t.call(method, path, { token: acme.adminToken, body });
const customFieldCount = async () =>
  (await t.catalogues.get(acme.tenant.id)).objects.flatMap((o) => o.fields).filter((f) => f.custom).length;

describe("EQL reserved words as field names", () => {
  // Each word as written in the grammar, and in other cases: EQL keywords are case-insensitive.
  const words = EQL_RESERVED_WORDS.flatMap((word) => [
    word,
    word.toLowerCase(),
    `${word[0]}${word.slice(1).toLowerCase()}`,
  ]);

  /** What the parser makes of a comparison's left side: `path` for a field, `error` when it does not parse. */
  const leftOperand = (filter: string) => {
    try {
      const tree = parseFilter(filter);
      return tree.kind === "compare" ? tree.left.kind : tree.kind;
    } catch (error) {
      if (error instanceof FilterParseError) return "error";
      throw error;
    }
  };

  test("the list is the parser's: no word reads as a field (an error, or a literal), other names do", () => {
    expect(EQL_RESERVED_WORDS.length).toBe(15);
    for (const word of words) {
      expect(isReservedWord(word)).toBe(true);
      expect(leftOperand(`${word} == 1`)).not.toBe("path");
    }
    for (const name of ["Notes", "Index", "Order", "Nullable", "NOW", "duration", "Hours", "m", "Current"]) {
      expect(isReservedWord(name)).toBe(false);
      expect(parseFilter(`${name} == 1`)).toMatchObject({ left: { kind: "path", segments: [{ name }] } });
    }
  });

  test.each(words)(
    "a field named %s is refused with 400 validation_failed; nothing is created",
    async (word) => {
      const before = await customFieldCount();
      const added = await admin("POST", "/custom/standalone/fields", {
        schemaName: "Contacts",
        name: word,
        column: { type: "int" },
      });
      expect(added.status).toBe(400);
      expect(added.body.errorType).toBe("validation_failed");
      expect(added.body.details).toEqual([{ path: "name", message: expect.stringContaining(`'${word}'`) }]);
      expect(added.body.details[0].message).toContain("filter language");

      const defined = await admin("POST", "/custom/standalone/schemas", {
        name: `Thing${word}`,
        fields: [
          { name: "Fine", column: { type: "int" } },
          { name: word, column: { type: "string" } },
        ],
      });
      expect(defined.status).toBe(400);
      expect(defined.body.details.map((d: { path: string }) => d.path)).toEqual(["fields[1].name"]);
      expect(await customFieldCount()).toBe(before);
    },
  );

  test("no standard object has a field (or <Name>Id member) named by a reserved word", () => {
    const members = STANDARD_OBJECTS.flatMap((object) =>
      object.fields.flatMap((field) =>
        field.type === "reference" ? [field.name, `${field.name}Id`] : [field.name],
      ),
    );
    expect(members.filter(isReservedWord)).toEqual([]);
  });

  test("names that only look like words (NOW, duration, units, Current) are accepted and filter", async () => {
    const names = ["NOW", "duration", "minutes", "d", "Current", "Notes"];
    const created = await admin("POST", "/custom/standalone/schemas", {
      name: "LookAlikes",
      fields: names.map((name) => ({ name, column: { type: "int" } })),
    });
    expect(created.status).toBe(200);
    const gql = graphqlClient(t, acme.adminToken);
    const input = names.map((name, i) => `${name}: ${i + 1}`).join(", ");
    const inserted = await gql(`mutation { schema { insertLookAlikes(input: {${input}}) } }`);
    expect(inserted.errors).toBeUndefined();
    const filter = names.map((name, i) => `${name} == ${i + 1}`).join(" AND ");
    const found = await gql(`{ lookAlikes(filter: "${filter}") { totalCount } }`);
    expect(found).toEqual({ data: { lookAlikes: { totalCount: 1 } } });
  });
});

describe("names every JavaScript object answers to", () => {
  // Records are plain objects keyed by field name: an absent `constructor` read as Object's.
  const members = ["constructor", "toString", "valueOf", "hasOwnProperty", "isPrototypeOf"];

  test.each(members)(
    "a field or an object named %s is refused with 400 validation_failed; nothing is created",
    async (name) => {
      const before = await customFieldCount();
      const added = await admin("POST", "/custom/standalone/fields", {
        schemaName: "Regions",
        name,
        column: { type: "string", maxLength: 10 },
      });
      expect(added.status).toBe(400);
      expect(added.body.details).toEqual([{ path: "name", message: expect.stringContaining("reserved") }]);
      const defined = await admin("POST", "/custom/standalone/schemas", {
        name,
        fields: [{ name, column: { type: "int" } }],
      });
      expect(defined.status).toBe(400);
      expect(defined.body.details.map((d: { path: string }) => d.path)).toEqual(["name", "fields[0].name"]);
      expect(await customFieldCount()).toBe(before);
    },
  );

  test("the same words in another case are fields like any other: a record without them inserts", async () => {
    const added = await admin("POST", "/custom/standalone/fields", {
      schemaName: "Regions",
      name: "Constructor",
      column: { type: "string", maxLength: 10 },
    });
    expect(added.status).toBe(200);
    const gql = graphqlClient(t, acme.adminToken);
    const inserted = await gql(`mutation { schema { insertRegions(input: {Name: "N", Timezone: "UTC"}) } }`);
    expect(inserted.errors).toBeUndefined();
  });
});
