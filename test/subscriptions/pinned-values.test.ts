/**
 * Which filters pin a field to values (and so may be indexed), by a table: the terms that pin, and
 * those that must not (a record could match the filter without the pinned value).
 */
import { describe, expect, test } from "bun:test";
import { prepareFilter } from "../../api/eql/check-filter.ts";
import { type PinnedField, pinnedValues } from "../../api/subscriptions/pinned-values.ts";
import { TEST_CATALOGUE, testObject } from "../eql/support/test-catalogue.ts";

const THINGS = testObject("Things");

function pins(text: string, mode: "filter" | "extended" = "filter"): PinnedField[] {
  return pinnedValues(prepareFilter(text, THINGS, TEST_CATALOGUE, { mode }));
}

const pin = (
  field: string,
  valueClass: PinnedField["valueClass"],
  values: PinnedField["values"],
  root: PinnedField["root"] = "record",
) => ({
  root,
  field,
  valueClass,
  values,
});

describe("terms that pin", () => {
  test.each<[string, PinnedField[]]>([
    ["UID == 'thing-01'", [pin("UID", "text", ["thing-01"])]],
    ["'thing-01' == UID", [pin("UID", "text", ["thing-01"])]],
    ["Owner IN ['owner-01', 'owner-02', 'owner-01']", [pin("Owner", "text", ["owner-01", "owner-02"])]],
    ["OwnerId == 'owner-03'", [pin("Owner", "text", ["owner-03"])]],
    ["Count == 7", [pin("Count", "number", [7])]],
    // Decimals are compared as doubles: the key is the number, not the canonical text.
    ["Price == 1.50", [pin("Price", "number", [1.5])]],
    ["Flag == TRUE", [pin("Flag", "boolean", [true])]],
    ["Day == 2024-05-01", [pin("Day", "date", ["2024-05-01"])]],
    ["Kind == 'Alpha' AND Name LIKE 'a%'", [pin("Kind", "text", ["Alpha"])]],
    [
      "UID == 'thing-01' AND (Count == 1 AND Flag == FALSE) AND Count > 0",
      [pin("UID", "text", ["thing-01"]), pin("Count", "number", [1]), pin("Flag", "boolean", [false])],
    ],
    ["(UID == 'a' OR UID == 'b') AND Kind IN ['Alpha']", [pin("Kind", "text", ["Alpha"])]],
  ])("%s", (text, expected) => {
    expect(pins(text)).toEqual(expected);
  });

  test.each<[string, PinnedField[]]>([
    ["Current.UID == 'thing-01'", [pin("UID", "text", ["thing-01"], "current")]],
    ["Previous.Count IN [1, 2] AND Operation == 'UPDATE'", [pin("Count", "number", [1, 2], "previous")]],
  ])("extended: %s", (text, expected) => {
    expect(pins(text, "extended")).toEqual(expected);
  });
});

describe("terms that must not pin", () => {
  test.each([
    // Either side may hold: no single value is needed.
    "UID == 'thing-01' OR UID == 'thing-02'",
    "UID == 'thing-01' OR Count == 1",
    // NOT (UID != x) would be safe, but NOT is never looked into.
    "NOT UID != 'thing-01'",
    "NOT (UID == 'thing-01' AND Count == 1)",
    "UID != 'thing-01'",
    "UID NOTIN ['thing-01']",
    "Name LIKE 'thing-01'",
    // An absent value matches these.
    "UID == null",
    "UID IN ['thing-01', null]",
    "Owner != null",
    "Count > null",
    "Count < 5",
    "Count >= 7",
    // The value is on another record.
    "Owner.Name == 'x'",
    "Owner.Parent.UID == 'owner-01'",
    // Field to field, NOW(), multipicklists.
    "Count == Minutes",
    "At == NOW()",
    "Tags INCLUDES 'red'",
    "Tags == null",
  ])("%s", (text) => {
    expect(pins(text)).toEqual([]);
  });

  test.each(["Operation == 'UPDATE'", "Current.UID != 'a'", "Current.Owner.Name == 'x'"])(
    "extended: %s",
    (text) => {
      expect(pins(text, "extended")).toEqual([]);
    },
  );
});
