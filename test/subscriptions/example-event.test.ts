/**
 * The example event of POST /webhooks/{id}/test on its own: an element shaped as a real change of
 * the subscription would shape it (members in order, aliases, data and previous), with an example
 * value of each selected field's type, within its bounds.
 */
import { describe, expect, test } from "bun:test";
import { assembleCatalogue } from "../../api/model/assemble-catalogue.ts";
import { type FieldType, findObject, type ObjectDef } from "../../api/model/catalogue.ts";
import { makeField } from "../../api/model/field-factory.ts";
import type { ChangeOperation, FieldValue } from "../../api/model/record-values.ts";
import { EXAMPLE_UID, exampleElement, exampleValue } from "../../api/subscriptions/example-event.ts";
import type { Subscription } from "../../api/subscriptions/subscription.ts";

const AT = Date.UTC(2024, 4, 1, 10, 0, 0, 123);
const field = (type: FieldType, more: Partial<Parameters<typeof makeField>[2]> = {}) =>
  makeField("Gadget", `F_${type}`, { type, custom: true, ...more });

describe("example values by field type", () => {
  test.each([
    ["string", field("string"), "example F_string"],
    ["string within maxLength", field("string", { maxLength: 4 }), "exam"],
    ["textarea", field("textarea"), "example F_textarea"],
    ["url", field("url"), "https://example.com/"],
    ["int", field("int"), 42],
    ["decimal", field("decimal"), "12.5"],
    ["boolean", field("boolean"), true],
    ["date", field("date"), "2024-05-01"],
    ["datetime (ms; ISO on the wire)", field("datetime"), AT],
    ["time", field("time"), "12:00:00.000"],
    ["picklist: its first item", field("picklist", { items: ["Red", "Blue"] }), "Red"],
    ["multipicklist: its first item", field("multipicklist", { items: ["Red", "Blue"] }), ["Red"]],
    ["reference", field("reference", { referenceTo: "Regions" }), EXAMPLE_UID],
  ] as [string, ReturnType<typeof field>, FieldValue][])("%s", (_, f, expected) => {
    expect(exampleValue(f, AT)).toEqual(expected);
  });
});

describe("the example element", () => {
  const catalogue = assembleCatalogue("t1", { version: 1, objects: [], fields: [] });
  const regions = findObject(catalogue, "Regions") as ObjectDef;
  const subscription = (operations: ChangeOperation[] | null): Subscription => ({
    object: regions,
    rootKey: "hooked",
    operations: operations && new Set(operations),
    filter: null,
    extendedFilter: null,
    members: [
      { key: "when", kind: "timestamp" },
      { key: "operation", kind: "operation" },
      {
        key: "data",
        kind: "data",
        fields: [
          { key: "name", field: "Name" },
          { key: "UID", field: "UID" },
        ],
      },
      { key: "previous", kind: "previous", fields: [{ key: "Name", field: "Name" }] },
    ],
    watched: ["Name", "UID"],
  });

  test.each([
    ["every operation: INSERT", null, "INSERT"],
    ["INSERT among those taken", ["DELETE", "INSERT"], "INSERT"],
    ["else the first taken", ["UPDATE", "DELETE"], "UPDATE"],
    ["DELETE only", ["DELETE"], "DELETE"],
  ] as [string, ChangeOperation[] | null, ChangeOperation][])("%s", (_, operations, operation) => {
    expect(exampleElement(subscription(operations), AT)).toEqual({
      data: {
        hooked: {
          when: new Date(AT).toISOString(),
          operation,
          data: { name: "example Name", UID: EXAMPLE_UID },
          previous: { Name: "example Name" },
        },
      },
    });
  });
});
