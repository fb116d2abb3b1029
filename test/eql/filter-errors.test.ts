/** Invalid filters: each with its error code and exact position (offset, line, column), and what was expected/found. */
import { describe, expect, test } from "bun:test";
import { prepareFilter } from "../../api/eql/check-filter.ts";
import type { FilterMode } from "../../api/eql/checked-filter.ts";
import { FilterParseError, UnknownFieldError } from "../../common/errors.ts";
import { TEST_CATALOGUE, testObject } from "./support/test-catalogue.ts";

type Case = [
  filter: string,
  code: string,
  at: [offset: number, line: number, column: number],
  expected?: string,
  found?: string,
];

const PARSE = "filter_parse_error";
const UNKNOWN = "unknown_field";
const UNIT = "a unit (ms, s, m, h, d, seconds, minutes, hours, days)";
/** Past it a duration could not be kept exactly (2^31 − 1 minutes, the longest Duration value). */
const LONGEST = "a duration of at most 2147483647 minutes";

const SYNTAX: Case[] = [
  ["", PARSE, [0, 1, 1], "a condition", "end of filter"],
  ["   ", PARSE, [3, 1, 4], "a condition", "end of filter"],
  ["Name ==", PARSE, [7, 1, 8], "a value", "end of filter"],
  ["Name == 'x' AND", PARSE, [15, 1, 16], "a condition", "end of filter"],
  ["Name = 'x'", PARSE, [5, 1, 6], "'=='", "'='"],
  ["Name ! 'x'", PARSE, [5, 1, 6], "'!='", "'!'"],
  ["Name == @", PARSE, [8, 1, 9], "a field, a value, an operator or a parenthesis", "'@'"],
  ["Name 'x'", PARSE, [5, 1, 6], undefined, "'x'"],
  ["Name == 'x", PARSE, [8, 1, 9], "'", "end of filter"],
  ["(Name == 'x'", PARSE, [12, 1, 13], "AND, OR or ')'", "end of filter"],
  ["Name == 'x')", PARSE, [11, 1, 12], "AND, OR or end of filter", "')'"],
  ["Name == 'x' Count == 1", PARSE, [12, 1, 13], "AND, OR or end of filter", "'Count'"],
  ["Name == 'x' AND OR Count == 1", PARSE, [16, 1, 17], "a condition", "'OR'"],
  ["NOT", PARSE, [3, 1, 4], "a condition", "end of filter"],
  ["Name == 'it''s'", PARSE, [12, 1, 13], "AND, OR or end of filter", "'s'"],
  ["Owner. == 'x'", PARSE, [7, 1, 8], "a field name", "'=='"],
  ["Count IN", PARSE, [8, 1, 9], "a list like ['a', 'b'] or a sub-query (SELECT ...)", "end of filter"],
  ["Count IN [", PARSE, [10, 1, 11], "a value", "end of filter"],
  ["Count IN [1,", PARSE, [12, 1, 13], "a value", "end of filter"],
  ["Count IN [1 2]", PARSE, [12, 1, 13], "',' or ']'", "'2'"],
  ["Count IN [1)", PARSE, [11, 1, 12], "',' or ']'", "')'"],
  ["Count IN []", PARSE, [10, 1, 11], "a value", "']'"],
  ["Count IN [Name]", PARSE, [10, 1, 11], "a value", "'Name'"],
  ["Count IN (SELECT FROM Owners)", PARSE, [17, 1, 18], "a field", "'FROM'"],
  ["Count IN (SELECT Score Owners)", PARSE, [23, 1, 24], "FROM", "'Owners'"],
  ["Count IN (SELECT Score FROM Owners WHERE)", PARSE, [40, 1, 41], "a condition", "')'"],
  ["Count IN (SELECT Score FROM Owners", PARSE, [34, 1, 35], "WHERE or ')'", "end of filter"],
  ["Tags INCLUDES", PARSE, [13, 1, 14], "a value", "end of filter"],
  ["5 IN [1]", PARSE, [0, 1, 1], "a field", "'5'"],
  ["At > NOW(", PARSE, [9, 1, 10], "')'", "end of filter"],
  ["At > NOW() + 2", PARSE, [14, 1, 15], UNIT, "end of filter"],
  ["At > NOW() + 1.5 h", PARSE, [13, 1, 14], "a whole number", "'1.5'"],
  ["At > NOW() - h", PARSE, [13, 1, 14], "a whole number", "'h'"],
  ["At > now()", PARSE, [8, 1, 9], "AND, OR or end of filter", "'('"],
  ["Minutes == duration(1.5 hours)", PARSE, [20, 1, 21], "a whole number", "'1.5'"],
  ["Minutes == duration(90)", PARSE, [22, 1, 23], UNIT, "')'"],
  // Durations and NOW() offsets longer than the longest Duration: refused where their amount starts.
  ["Minutes > 2147483648 minutes", PARSE, [10, 1, 11], LONGEST, "'2147483648 minutes'"],
  ["Minutes > -2147483648 minutes", PARSE, [11, 1, 12], LONGEST, "'2147483648 minutes'"],
  ["Minutes > 99999999999999999999 minutes", PARSE, [10, 1, 11], LONGEST],
  ["Minutes == duration(9007199254740993 ms)", PARSE, [20, 1, 21], LONGEST, "'9007199254740993 ms'"],
  ["Count IN [1, 1491309 days]", PARSE, [13, 1, 14], LONGEST, "'1491309 days'"],
  ["At > NOW() + 99999999999 d", PARSE, [13, 1, 14], LONGEST, "'99999999999 d'"],
  ["Day > NOW() - 128849018820001 ms", PARSE, [14, 1, 15], LONGEST, "'128849018820001 ms'"],
  ["At == 2024-13-01", PARSE, [6, 1, 7], "a real date, like 2024-05-01", "'2024-13-01'"],
  ["At == 2023-02-29", PARSE, [6, 1, 7], "a real date, like 2024-05-01", "'2023-02-29'"],
  ["At == 2024-05-01T25:00:00Z", PARSE, [6, 1, 7], undefined, "'2024-05-01T25:00:00Z'"],
  ["At == 2024-05-01T10:00:00", PARSE, [6, 1, 7], undefined, "'2024-05-01T10:00:00'"],
  ["At == 2024-05-01T10", PARSE, [6, 1, 7], undefined, "'2024-05-01T10'"],
  ["Clock == 24:00", PARSE, [9, 1, 10], "a real time of day, like 10:30 or 10:30:00", "'24:00'"],
  ["Name == 'x'\nAND\nCount ==", PARSE, [24, 3, 9], "a value", "end of filter"],
  ["Name == 'x' AND\n  (Count > 1 OR\n   Count <)", PARSE, [42, 3, 11], "a value", "')'"],
  [
    `${"(".repeat(65)}a == 1${")".repeat(65)}`,
    PARSE,
    [64, 1, 65],
    "at most 64 levels of nesting",
    "deeper nesting",
  ],
  [`${"NOT ".repeat(65)}a == 1`, PARSE, [256, 1, 257], "at most 64 levels of nesting", "deeper nesting"],
  ["a".repeat(10_001), PARSE, [10_000, 1, 10_001], "at most 10000 characters", "10001 characters"],
];

const TYPES: Case[] = [
  ["Nme == 'x'", UNKNOWN, [0, 1, 1]],
  ["Owner.Nme == 'x'", UNKNOWN, [6, 1, 7]],
  ["Owner.Parent.Scor > 1", UNKNOWN, [13, 1, 14]],
  ["OwnerIds == 'x'", UNKNOWN, [0, 1, 1]],
  ["Name == 'x' OR\n  Cont > 1", UNKNOWN, [17, 2, 3]],
  ["Count IN (SELECT Scor FROM Owners)", UNKNOWN, [17, 1, 18]],
  ["Count IN (SELECT Score FROM Owners WHERE Nam == 'x')", UNKNOWN, [41, 1, 42]],
  ["\"a\" == 'x'", PARSE, [0, 1, 1], "a field", "string 'a'"],
  ["1 == 1", PARSE, [0, 1, 1], "a field", "number 1"],
  ["Count == 'abc'", PARSE, [9, 1, 10], "a number for Count (int)", "string 'abc'"],
  ["Count IN [1, 'x']", PARSE, [13, 1, 14], "a number for Count (int)", "string 'x'"],
  ["Count LIKE 'a%'", PARSE, [0, 1, 1], "a text field before 'LIKE'", "Count (int)"],
  ["Name LIKE 5", PARSE, [10, 1, 11], "a string pattern after 'LIKE'", "number 5"],
  ["Name NOTLIKE Note", PARSE, [13, 1, 14], "a string pattern after 'NOTLIKE'", "a field"],
  ["Flag > true", PARSE, [5, 1, 6], "== or != for Flag (boolean)", "'>'"],
  ["Flag == 'yes'", PARSE, [8, 1, 9], "true or false for Flag (boolean)", "string 'yes'"],
  [
    "Tags == 'red'",
    PARSE,
    [5, 1, 6],
    "INCLUDES, EXCLUDES, == null or != null for Tags (multipicklist)",
    "'=='",
  ],
  ["Tags IN ['red']", PARSE, [5, 1, 6], "INCLUDES or EXCLUDES for Tags (multipicklist)", "'IN'"],
  ["Tags INCLUDES 'purple'", PARSE, [14, 1, 15], undefined, "'purple'"],
  ["Tags INCLUDES null", PARSE, [14, 1, 15], "a string", "null"],
  ["Name INCLUDES 'x'", PARSE, [0, 1, 1], "a multipicklist field before 'INCLUDES'", "Name (string)"],
  ["Kind == 'alpha'", PARSE, [8, 1, 9], undefined, "'alpha'"],
  ["Kind IN ['Alpha', 'Omega']", PARSE, [18, 1, 19], undefined, "'Omega'"],
  ["Name.First == 'x'", PARSE, [5, 1, 6], "a reference field before '.'", "'Name'"],
  [
    "Count IN (SELECT Name FROM Owners)",
    PARSE,
    [17, 1, 18],
    "a field comparable with Count (int)",
    "Name (string)",
  ],
  [
    "Count IN (SELECT Score FROM Nobody)",
    PARSE,
    [28, 1, 29],
    "an object (Things, Owners, Users)",
    "'Nobody'",
  ],
  ["Day == NOW() AND Count > NOW()", PARSE, [25, 1, 26], "a value for Count (int)", "NOW()"],
  ["At == 'yesterday'", PARSE, [6, 1, 7], undefined, "string 'yesterday'"],
  ["Day == 2024-05-01T10:00:00Z", PARSE, [7, 1, 8], "a date like 2024-05-01 for Day (date)", undefined],
  ["Clock < '25:00'", PARSE, [8, 1, 9], "a time like 10:30 for Clock (time)", "string '25:00'"],
  ["Price > 1 hour", PARSE, [8, 1, 9], "a number for Price (decimal)", "duration 1 hour"],
  ["Price > '1e5'", PARSE, [8, 1, 9], "a number for Price (decimal)", "string '1e5'"],
  ["Name == Count", PARSE, [8, 1, 9], "a field comparable with Name (string)", "Count (int)"],
  ["Name == 5", PARSE, [8, 1, 9], "a string for Name (string)", "number 5"],
  ["Flag < null", PARSE, [5, 1, 6], "== or != for Flag (boolean)", "'<'"],
];

const EXTENDED: Case[] = [
  ["Name == 'x'", UNKNOWN, [0, 1, 1]],
  ["Current == 'x'", PARSE, [0, 1, 1], "'Current.<field>'", "'Current'"],
  ["Operation == 'insert'", PARSE, [13, 1, 14], undefined, "'insert'"],
  ["Current.Nme == 'x'", UNKNOWN, [8, 1, 9]],
  ["Operation LIKE 5", PARSE, [15, 1, 16], "a string pattern after 'LIKE'", "number 5"],
];

/** Rows as objects: bun passes a `done` callback to callbacks declaring more parameters than a row has. */
const rows = (cases: Case[]) =>
  cases.map(([filter, code, at, expected, found]) => ({ filter, code, at, expected, found }));

function expectError(
  filter: string,
  mode: FilterMode,
  code: string,
  at: Case[2],
  expected?: string,
  found?: string,
) {
  let error: unknown;
  try {
    prepareFilter(filter, testObject("Things"), TEST_CATALOGUE, { mode });
  } catch (thrown) {
    error = thrown;
  }
  if (!(error instanceof FilterParseError || error instanceof UnknownFieldError))
    throw new Error(`no filter error: ${error}`);
  expect({
    code: error.code,
    at: [error.position?.offset, error.position?.line, error.position?.column],
  }).toEqual({ code, at });
  if (error instanceof FilterParseError) {
    if (expected !== undefined) expect(error.expected).toBe(expected);
    if (found !== undefined) expect(error.found).toBe(found);
    expect(error.message).toContain(
      error.position.line > 1 ? `line ${error.position.line}, column` : `column ${error.position.column}`,
    );
  }
}

describe("syntax errors", () => {
  test.each(rows(SYNTAX))("$filter", ({ filter, code, at, expected, found }) =>
    expectError(filter, "filter", code, at, expected, found),
  );
});

describe("type errors and unknown fields", () => {
  test.each(rows(TYPES))("$filter", ({ filter, code, at, expected, found }) =>
    expectError(filter, "filter", code, at, expected, found),
  );
});

describe("extended filters", () => {
  test.each(rows(EXTENDED))("$filter", ({ filter, code, at, expected, found }) =>
    expectError(filter, "extended", code, at, expected, found),
  );
});

describe("messages", () => {
  test("say what was expected, after what, where, and what was found", () => {
    expect(() => prepareFilter("Description == ", testObject("Things"), TEST_CATALOGUE)).toThrow(
      "expected a value after '==' at column 16, found end of filter",
    );
  });

  test("unknown fields list the valid names and the closest one", () => {
    try {
      prepareFilter("Owner.Scor > 1", testObject("Things"), TEST_CATALOGUE);
      throw new Error("no error");
    } catch (error) {
      if (!(error instanceof UnknownFieldError)) throw error;
      expect(error.message).toBe("unknown field 'Scor' on Owners at column 7; did you mean 'Score'?");
      expect(error.objectName).toBe("Owners");
      expect(error.suggestion).toBe("Score");
      expect(error.validNames).toEqual([
        "UID",
        "CreatedDate",
        "LastModifiedDate",
        "CreatedBy",
        "CreatedById",
        "LastModifiedBy",
        "LastModifiedById",
        "Name",
        "Score",
        "Rank",
        "Parent",
        "ParentId",
      ]);
    }
  });

  test("no suggestion when nothing is close", () => {
    try {
      prepareFilter("Zebrafish == 1", testObject("Things"), TEST_CATALOGUE);
    } catch (error) {
      if (!(error instanceof UnknownFieldError)) throw error;
      expect(error.suggestion).toBeNull();
      expect(error.message).toBe("unknown field 'Zebrafish' on Things at column 1");
    }
  });

  test("extended filters suggest Current.<field>", () => {
    try {
      prepareFilter("Count > 1", testObject("Things"), TEST_CATALOGUE, { mode: "extended" });
    } catch (error) {
      if (!(error instanceof UnknownFieldError)) throw error;
      expect(error.validNames).toEqual(["Current", "Previous", "Operation"]);
      expect(error.suggestion).toBe("Current.Count");
    }
  });
});

describe("a LIKE pattern's length", () => {
  test("at most 1,000 characters (code points): one more is refused at the pattern", () => {
    const refuse = (pattern: string) =>
      expectError(`Name NOTLIKE '${pattern}'`, "filter", PARSE, [13, 1, 14]);
    refuse("a".repeat(1001));
    refuse(`%${"_".repeat(1000)}`);
    const accept = (pattern: string) =>
      prepareFilter(`Name LIKE '${pattern}'`, testObject("Things"), TEST_CATALOGUE, { mode: "filter" });
    expect(() => accept("a".repeat(1000))).not.toThrow();
    // Characters, not UTF-16 units: 1,000 emoji are 2,000 units.
    expect(() => accept("😀".repeat(1000))).not.toThrow();
  });
});
