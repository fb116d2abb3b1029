/** The checker: paths resolved, operators typed, literals coerced to the stored representation (record-codec.ts). */
import { describe, expect, test } from "bun:test";
import { MAX_SUBQUERIES, MAX_SUBQUERY_DEPTH, prepareFilter } from "../../api/eql/check-filter.ts";
import type { FilterMode } from "../../api/eql/checked-filter.ts";
import { STANDARD_OBJECTS } from "../../api/model/standard-objects.ts";
import type { FilterParseError } from "../../common/errors.ts";
import { renderChecked } from "./support/render-checked.ts";
import { TEST_CATALOGUE, testObject } from "./support/test-catalogue.ts";

const checked = (filter: string, mode: FilterMode = "filter", object = "Things") =>
  renderChecked(prepareFilter(filter, testObject(object), TEST_CATALOGUE, { mode }).condition);

const MAY_1_10H = Date.UTC(2024, 4, 1, 10);
const MAY_1 = Date.UTC(2024, 4, 1);

const CASES: [rule: string, filter: string, tree: string][] = [
  // text-like fields
  ["string", "Name == 'x'", '(==:text Name "x")'],
  ["textarea ordering", "Note >= 'm'", '(>=:text Note "m")'],
  ["url", "Link != 'https://x'", '(!=:text Link "https://x")'],
  ["UID", "UID == 'abc'", '(==:text UID "abc")'],
  ["reference by <Name>Id", "OwnerId == 'o1'", '(==:text Owner "o1")'],
  ["reference by its bare name", "Owner == 'o1'", '(==:text Owner "o1")'],
  ["picklist value", "Kind == 'Ga mma'", '(==:text Kind "Ga mma")'],
  ["picklist ordering takes any text", "Kind < 'b'", '(<:text Kind "b")'],
  ["picklist LIKE takes any pattern", "Kind LIKE 'al%'", '(like Kind "al%")'],
  // numbers
  ["int", "Count > 5", "(>:number Count 5)"],
  ["int, quoted number", "Count > '5'", "(>:number Count 5)"],
  ["int, decimal literal", "Count < 2.5", "(<:number Count 2.5)"],
  ["int, duration literal in minutes", "Count == 2 hours", "(==:number Count 120)"],
  ["duration, minutes", "Minutes >= 90 minutes", "(>=:number Minutes 90)"],
  ["duration, duration()", "Minutes == duration(1 day)", "(==:number Minutes 1440)"],
  ["duration, seconds", "Minutes < 30 seconds", "(<:number Minutes 0.5)"],
  ["duration, plain number", "Minutes == 45", "(==:number Minutes 45)"],
  ["decimal, canonical", "Price == 012.50", '(==:number Price "12.5")'],
  ["decimal, negative", "Price > -0.50", '(>:number Price "-0.5")'],
  ["decimal, quoted", "Price < '3.140'", '(<:number Price "3.14")'],
  ["decimal, negative zero", "Price == -0.0", '(==:number Price "0")'],
  // booleans
  ["boolean", "Flag == true", "(==:boolean Flag true)"],
  ["boolean, quoted", "Flag != 'FALSE'", "(!=:boolean Flag false)"],
  // dates and times
  ["datetime, instant", "At > 2024-05-01T12:00:00+02:00", `(>:datetime At ${MAY_1_10H})`],
  ["datetime, quoted instant", "At > '2024-05-01T10:00:00.000Z'", `(>:datetime At ${MAY_1_10H})`],
  ["datetime, date means UTC midnight", "At >= 2024-05-01", `(>=:datetime At ${MAY_1})`],
  ["datetime, quoted date", "At >= '2024-05-01'", `(>=:datetime At ${MAY_1})`],
  ["date", "Day == 2024-05-01", '(==:date Day "2024-05-01")'],
  ["date, quoted", "Day < '2024-05-01'", '(<:date Day "2024-05-01")'],
  ["time", "Clock < 10:00", '(<:time Clock "10:00:00.000")'],
  ["time, quoted", "Clock >= '9:30:15.5'", '(>=:time Clock "09:30:15.500")'],
  // NOW()
  ["NOW() stays symbolic", "At < NOW()", "(<:datetime At NOW(0):datetime)"],
  ["NOW() with offset", "At < NOW() - 2 h", "(<:datetime At NOW(-7200000):datetime)"],
  ["NOW() on a date", "Day == NOW() + 1 d", "(==:date Day NOW(86400000):date)"],
  ["NOW() on a time", "Clock > NOW()", "(>:time Clock NOW(0):time)"],
  ["NOW() on the left flips", "NOW() > At", "(<:datetime At NOW(0):datetime)"],
  // operand order and null
  ["literal on the left flips", "5 < Count", "(>:number Count 5)"],
  ["<= flips to >=", "5 <= Count", "(>=:number Count 5)"],
  ["== null", "Name == null", "(null? Name)"],
  ["!= null", "Name != null", "(not (null? Name))"],
  ["null == field", "null == Name", "(null? Name)"],
  ["multipicklist == null", "Tags == null", "(null? Tags)"],
  ["other comparisons with null are unknown", "Count > null", "unknown"],
  ["LIKE null is unknown", "Name LIKE null", "unknown"],
  // field to field
  ["field to field", "Count < Owner.Score", "(<:number Count Owner.Score)"],
  ["int to decimal", "Count == Price", "(==:number Count Price)"],
  ["string to picklist", "Name == Kind", "(==:text Name Kind)"],
  ["reference to UID", "OwnerId == Backup.UID", "(==:text Owner Backup.UID)"],
  // lookups
  ["lookup", "Owner.Name == 'a'", '(==:text Owner.Name "a")'],
  ["nested lookup", "Owner.Parent.Score > 1", "(>:number Owner.Parent.Score 1)"],
  ["nested lookup id", "Owner.ParentId == 'x'", '(==:text Owner.Parent "x")'],
  // LIKE
  ["LIKE canonical pattern", "Name LIKE 'a\\%b\\_c\\d%'", '(like Name "a\\\\%b\\\\_cd%")'],
  ["NOTLIKE", "Name NOTLIKE '%x'", '(not (like Name "%x"))'],
  // IN
  ["IN", "Count IN [1, 2]", "(in:number Count [1 2])"],
  ["NOTIN", "Name NOTIN ('a')", '(not (in:text Name ["a"]))'],
  ["IN with null", "Kind IN ['Alpha', null]", '(in:text Kind ["Alpha"]+null)'],
  ["IN only null", "Kind IN [null]", "(null? Kind)"],
  [
    "IN coerces each value",
    "At IN [2024-05-01, '2024-05-01T10:00:00Z']",
    `(in:datetime At [${MAY_1} ${MAY_1_10H}])`,
  ],
  ["IN decimals", "Price IN [1.50, 2]", '(in:number Price ["1.5" "2"])'],
  [
    "IN sub-query",
    "OwnerId IN (SELECT UID FROM Owners WHERE Score > 3)",
    "(in:text Owner (select Owners UID (>:number Score 3)))",
  ],
  [
    "NOTIN sub-query without WHERE",
    "Count NOTIN (SELECT Score FROM Owners)",
    "(not (in:number Count (select Owners Score)))",
  ],
  [
    "sub-query selecting a lookup",
    "Name IN (SELECT Parent.Name FROM Owners)",
    "(in:text Name (select Owners Parent.Name))",
  ],
  // INCLUDES
  ["INCLUDES", "Tags INCLUDES 'red'", '(includes Tags ["red"])'],
  ["EXCLUDES list", "Tags EXCLUDES ['red', 'ünï']", '(not (includes Tags ["red","ünï"]))'],
  // logic
  [
    "logic",
    "NOT (Count > 1 OR Count < 0) AND Flag == false",
    "(and (not (or (>:number Count 1) (<:number Count 0))) (==:boolean Flag false))",
  ],
];

describe("checkFilter", () => {
  test.each(CASES)("%s: %s", (_rule, filter, tree) => expect(checked(filter)).toBe(tree));
});

describe("extended filters", () => {
  const EXTENDED: [string, string][] = [
    ["Current.Count > Previous.Count", "(>:number current:Count previous:Count)"],
    ["Operation == 'UPDATE'", '(==:text Operation "UPDATE")'],
    ["Operation IN ['INSERT', 'DELETE']", '(in:text Operation ["INSERT" "DELETE"])'],
    ["current.Owner.Name != previous.Owner.Name", "(!=:text current:Owner.Name previous:Owner.Name)"],
    [
      "Current.OwnerId IN (SELECT UID FROM Owners WHERE Score > 1)",
      "(in:text current:Owner (select Owners UID (>:number Score 1)))",
    ],
  ];
  test.each(EXTENDED)("%s", (filter, tree) => expect(checked(filter, "extended")).toBe(tree));
});

test("standard objects check too", () => {
  const filter = "Region.Name == 'North' AND JobStatus IN ['Queued', 'Dispatched'] AND Start < NOW() + 2 h";
  const catalogue = { tenantId: "t", version: 1, objects: [...STANDARD_OBJECTS] };
  const jobs = catalogue.objects.find((object) => object.name === "Jobs");
  if (!jobs) throw new Error("no Jobs");
  expect(renderChecked(prepareFilter(filter, jobs, catalogue).condition)).toBe(
    '(and (==:text Region.Name "North") (in:text JobStatus ["Queued" "Dispatched"]) (<:datetime Start NOW(7200000):datetime))',
  );
});

describe("sub-query limits (before any SQL runs, on every engine)", () => {
  const prepare = (filter: string) => prepareFilter(filter, testObject("Owners"), TEST_CATALOGUE);
  /** `UID IN (SELECT UID FROM Owners WHERE ` `depth` times around `inner`. */
  const nested = (depth: number, inner = "Name == 'x'") =>
    `${"UID IN (SELECT UID FROM Owners WHERE ".repeat(depth)}${inner}${")".repeat(depth)}`;
  const siblings = (count: number) => Array(count).fill(nested(1)).join(" OR ");
  const refusal = (filter: string) => {
    try {
      prepare(filter);
    } catch (error) {
      return error as FilterParseError;
    }
    throw new Error(`accepted: ${filter}`);
  };

  test(`${MAX_SUBQUERY_DEPTH} nested and ${MAX_SUBQUERIES} in all are accepted`, () => {
    expect(MAX_SUBQUERY_DEPTH).toBe(4);
    expect(MAX_SUBQUERIES).toBe(8);
    expect(() => prepare(nested(4))).not.toThrow();
    expect(() => prepare(`${nested(4)} OR ${siblings(4)}`)).not.toThrow();
  });

  test.each([5, 30, 60])("%i nested: FILTER_PARSE_ERROR at the fifth", (depth) => {
    const error = refusal(nested(depth));
    expect(error.code).toBe("filter_parse_error");
    expect(error.message).toBe("sub-queries nest deeper than 4 levels at column 156");
    expect(error.position.offset).toBe(nested(4).indexOf("Name") + "UID IN ".length);
    expect(error.expected).toBe("at most 4 levels of sub-queries");
  });

  test("a ninth sub-query: FILTER_PARSE_ERROR at it", () => {
    const filter = siblings(9);
    const error = refusal(filter);
    expect(error.code).toBe("filter_parse_error");
    expect(error.message).toStartWith("filter has more than 8 sub-queries at column ");
    expect(error.position.offset).toBe(filter.lastIndexOf("(SELECT"));
  });

  test("sub-queries in a sub-query count towards the 8", () => {
    expect(refusal(`${nested(4)} OR ${nested(4)} OR ${nested(1)}`).message).toStartWith(
      "filter has more than 8 sub-queries",
    );
  });
});
