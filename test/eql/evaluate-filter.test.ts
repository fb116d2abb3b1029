/** The in-memory evaluator: which of a few hand-made records each filter selects, and extended filters on changes. */
import { describe, expect, test } from "bun:test";
import { prepareFilter } from "../../api/eql/check-filter.ts";
import {
  type ChangeValues,
  type EvaluationContext,
  evaluateExtendedFilter,
  evaluateFilter,
} from "../../api/eql/evaluate-filter.ts";
import type { RecordValues } from "../../api/model/record-values.ts";
import { TEST_CATALOGUE, testObject } from "./support/test-catalogue.ts";

const NOW = Date.UTC(2024, 4, 1, 10);
const HOUR = 3_600_000;

const OWNERS: RecordValues[] = [
  { UID: "o1", Name: "Olga", Score: 5, Rank: "2.5", Parent: "o2" },
  { UID: "o2", Name: "Pete", Score: 7, Rank: null, Parent: null },
];

const THINGS: RecordValues[] = [
  {
    UID: "t1",
    Name: "abc",
    Note: "100% sure",
    Link: "x😀y",
    Count: 5,
    Minutes: 90,
    Price: "1.5",
    Flag: true,
    Day: "2024-05-01",
    At: NOW - HOUR,
    Clock: "09:30:00.000",
    Kind: "Alpha",
    Tags: ["red", "Green"],
    Owner: "o1",
    Backup: "o1",
  },
  {
    UID: "t2",
    Name: "ÀBC",
    Note: "a_b",
    Count: 7,
    Minutes: 30,
    Price: "10",
    Flag: false,
    Day: "2024-04-30",
    At: NOW + HOUR,
    Clock: "10:30:00.000",
    Kind: "beta",
    Tags: [],
    Owner: "gone",
    Backup: "o2",
  },
  { UID: "t3" },
];

const context: EvaluationContext = {
  now: NOW,
  lookup: (object, uid) => (object === "Owners" ? (OWNERS.find((owner) => owner.UID === uid) ?? null) : null),
  select: (object) => (object === "Owners" ? OWNERS : []),
};

const selected = (filter: string) => {
  const checked = prepareFilter(filter, testObject("Things"), TEST_CATALOGUE);
  return THINGS.filter((record) => evaluateFilter(checked, record, context)).map((record) => record.UID);
};

const CASES: [rule: string, filter: string, uids: string[]][] = [
  ["== on text is case-sensitive", "Name == 'ABC'", []],
  ["LIKE folds ASCII case", "Name LIKE 'ABC'", ["t1"]],
  ["LIKE does not fold non-ASCII", "Name LIKE 'àbc'", []],
  ["LIKE % and _", "Name LIKE '_B%'", ["t1", "t2"]],
  ["LIKE _ is one code point", "Link LIKE 'x_y'", ["t1"]],
  ["LIKE escaped %", "Note LIKE '100\\% %'", ["t1"]],
  ["LIKE unescaped % matches anything", "Note LIKE '%\\_%'", ["t2"]],
  ["NOTLIKE skips absent values", "Name NOTLIKE 'x%'", ["t1", "t2"]],
  ["ordering", "Count > 5", ["t2"]],
  ["absent values never compare", "Count != 5", ["t2"]],
  ["== null tests absence", "Count == null", ["t3"]],
  ["!= null tests presence", "Count != null", ["t1", "t2"]],
  ["NOT of an unknown comparison stays unknown", "NOT Count == 5", ["t2"]],
  ["comparison with a null literal is unknown", "Count > null OR Flag == true", ["t1"]],
  ["NOT of that is still unknown", "NOT Count > null", []],
  ["unknown OR true", "Count > null OR Count != null", ["t1", "t2"]],
  ["unknown AND false is false; NOT makes it true", "NOT (Count > null AND Count == 6)", ["t1", "t2"]],
  ["decimals compare numerically", "Price > 2", ["t2"]],
  ["decimal equality ignores written zeros", "Price == 1.50", ["t1"]],
  ["durations in minutes", "Minutes >= 1 hour", ["t1"]],
  ["booleans", "Flag == false", ["t2"]],
  ["NOW()", "At < NOW()", ["t1"]],
  ["NOW() with offset", "At > NOW() + 30 m", ["t2"]],
  ["NOW() on a date", "Day == NOW()", ["t1"]],
  ["NOW() on a time", "Clock < NOW()", ["t1"]],
  ["datetime vs date literal", "At >= 2024-05-01", ["t1", "t2"]],
  ["lookup", "Owner.Name == 'Olga'", ["t1"]],
  ["dangling reference reads as absent", "Owner.Name == null", ["t2", "t3"]],
  ["nested lookup", "Owner.Parent.Score == 7", ["t1"]],
  ["reference id", "OwnerId == 'gone'", ["t2"]],
  ["field to field", "Count == Owner.Score", ["t1", "t3"]],
  ["field to field, null-safe ==", "Owner.Rank == Backup.Rank", ["t1", "t2", "t3"]],
  ["field to field, null-safe !=", "Owner.Rank != Backup.Rank", []],
  ["field to field ordering with absent is unknown", "Count < Owner.Score", []],
  ["IN", "Kind IN ['Alpha', 'beta']", ["t1", "t2"]],
  ["NOTIN skips absent values", "Kind NOTIN ['Alpha']", ["t2"]],
  ["IN with null also takes absence", "Kind IN ['beta', null]", ["t2", "t3"]],
  ["NOTIN with null excludes absence", "Kind NOTIN ['beta', null]", ["t1"]],
  ["IN sub-query", "OwnerId IN (SELECT UID FROM Owners WHERE Score > 6)", []],
  ["IN sub-query on a lookup", "Backup.UID IN (SELECT UID FROM Owners WHERE Score > 6)", ["t2"]],
  ["sub-query ignores null selections", "Count NOTIN (SELECT Rank FROM Owners)", ["t1", "t2"]],
  [
    "empty sub-query: IN is false even for absent",
    "Count IN (SELECT Score FROM Owners WHERE Score > 100)",
    [],
  ],
  [
    "empty sub-query: NOTIN is true even for absent",
    "Count NOTIN (SELECT Score FROM Owners WHERE Score > 100)",
    ["t1", "t2", "t3"],
  ],
  ["INCLUDES", "Tags INCLUDES 'red'", ["t1"]],
  ["INCLUDES any of a list", "Tags INCLUDES ['blue sky', 'Green']", ["t1"]],
  ["EXCLUDES skips absent values", "Tags EXCLUDES 'red'", ["t2"]],
  ["AND binds tighter than OR", "Count == 7 OR Count == 5 AND Flag == false", ["t2"]],
];

describe("evaluateFilter", () => {
  test.each(CASES)("%s: %s", (_rule, filter, uids) => expect(selected(filter)).toEqual(uids));
});

describe("evaluateExtendedFilter", () => {
  const before: RecordValues = { UID: "t1", Count: 1, Name: "a", Owner: "o1" };
  const after: RecordValues = { UID: "t1", Count: 2, Name: "a", Owner: "o2" };
  const update: ChangeValues = { current: after, previous: before, operation: "UPDATE" };
  const insert: ChangeValues = { current: after, previous: after, operation: "INSERT" };
  const CHANGES: [string, ChangeValues, boolean][] = [
    ["Operation == 'UPDATE'", update, true],
    ["Operation == 'UPDATE'", insert, false],
    ["Operation IN ['INSERT', 'DELETE']", insert, true],
    ["Current.Count > Previous.Count", update, true],
    ["Current.Count > Previous.Count", insert, false],
    ["Current.Name != Previous.Name", update, false],
    ["Current.Owner.Name != Previous.Owner.Name", update, true],
    ["Current.Owner.Parent.Name == 'Pete'", update, false],
    ["Previous.Owner.Parent.Name == 'Pete'", update, true],
    ["Current.Kind != Previous.Kind", update, false],
    ["Current.OwnerId IN (SELECT UID FROM Owners WHERE Score == 7)", update, true],
    ["Operation == 'INSERT' OR Current.Count >= 2", update, true],
  ];
  test.each(CHANGES)("%s", (filter, change, matches) => {
    const checked = prepareFilter(filter, testObject("Things"), TEST_CATALOGUE, { mode: "extended" });
    expect(evaluateExtendedFilter(checked, change, context)).toBe(matches);
  });

  test("absent previous values read as absent", () => {
    const checked = prepareFilter("Previous.Count == null", testObject("Things"), TEST_CATALOGUE, {
      mode: "extended",
    });
    expect(
      evaluateExtendedFilter(checked, { current: after, previous: null, operation: "INSERT" }, context),
    ).toBe(true);
  });

  test("modes do not mix", () => {
    const plain = prepareFilter("Count == 1", testObject("Things"), TEST_CATALOGUE);
    const extended = prepareFilter("Current.Count == 1", testObject("Things"), TEST_CATALOGUE, {
      mode: "extended",
    });
    expect(() => evaluateExtendedFilter(plain, insert, context)).toThrow();
    expect(() => evaluateFilter(extended, after, context)).toThrow();
  });
});
