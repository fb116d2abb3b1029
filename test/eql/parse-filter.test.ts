/** The grammar of SPEC.md §4, rule by rule: filter text → syntax tree (rendered as S-expressions). */
import { describe, expect, test } from "bun:test";
import { MAX_FILTER_DEPTH, parseFilter } from "../../api/eql/parse-filter.ts";
import { FilterParseError } from "../../common/errors.ts";
import { renderAst } from "./support/render-ast.ts";

const expectTree = (filter: string, tree: string) => expect(renderAst(parseFilter(filter))).toBe(tree);

const VALID: [rule: string, filter: string, tree: string][] = [
  // compOp
  ["==", "Name == 'x'", '(== Name "x")'],
  ["!=", "Name != 'x'", '(!= Name "x")'],
  ["<", "Count < 5", "(< Count #5)"],
  ["<=", "Count <= 5", "(<= Count #5)"],
  [">", "Count > 5", "(> Count #5)"],
  [">=", "Count >= 5", "(>= Count #5)"],
  ["LIKE", "Name LIKE 'a%'", '(LIKE Name "a%")'],
  ["NOTLIKE", "Name NOTLIKE '_b'", '(NOTLIKE Name "_b")'],
  ["NOT LIKE (two words)", "Name NOT LIKE 'a%'", '(NOTLIKE Name "a%")'],
  ["no spaces around symbols", "Count>=5", "(>= Count #5)"],
  // logic and precedence
  ["AND binds tighter than OR", "a == 1 OR b == 2 AND c == 3", "(or (== a #1) (and (== b #2) (== c #3)))"],
  ["AND then OR", "a == 1 AND b == 2 OR c == 3", "(or (and (== a #1) (== b #2)) (== c #3))"],
  ["chains flatten", "a == 1 AND b == 2 AND c == 3", "(and (== a #1) (== b #2) (== c #3))"],
  ["parentheses", "(a == 1 OR b == 2) AND c == 3", "(and (or (== a #1) (== b #2)) (== c #3))"],
  ["redundant parentheses", "((a == 1))", "(== a #1)"],
  ["NOT", "NOT a == 1", "(not (== a #1))"],
  ["NOT binds tighter than AND", "NOT a == 1 AND b == 2", "(and (not (== a #1)) (== b #2))"],
  ["NOT NOT", "NOT NOT a == 1", "(not (not (== a #1)))"],
  ["NOT of a group", "NOT (a == 1 OR b == 2)", "(not (or (== a #1) (== b #2)))"],
  [
    "keywords in any case",
    "a == 1 and b == 2 Or not c == 3",
    "(or (and (== a #1) (== b #2)) (not (== c #3)))",
  ],
  ["newlines and tabs", "a == 1\n\tAND\r\n b == 2", "(and (== a #1) (== b #2))"],
  // operands
  ["dotted path", "Region.Name == 'North'", '(== Region.Name "North")'],
  ["long path", "Job.Region.Account.Name == 'x'", '(== Job.Region.Account.Name "x")'],
  ["keyword after a dot is a name", "Owner.Not == 1", "(== Owner.Not #1)"],
  ["literal on the left", "5 < Count", "(< #5 Count)"],
  ["field to field", "End > Start", "(> End Start)"],
  [
    "extended paths",
    "Current.Status != Previous.Status AND Operation == 'UPDATE'",
    '(and (!= Current.Status Previous.Status) (== Operation "UPDATE"))',
  ],
  // literals
  ["single-quoted string", "a == 'it'", '(== a "it")'],
  ["double-quoted string", 'a == "say"', '(== a "say")'],
  ["escaped quote", "a == 'it\\'s'", '(== a "it\'s")'],
  ["escaped backslash", "a == 'C:\\\\dir'", '(== a "C:\\\\dir")'],
  ["other backslashes stay", "a LIKE '100\\%'", '(LIKE a "100\\\\%")'],
  ["double quote inside single quotes", "a == 'say \"hi\"'", '(== a "say \\"hi\\"")'],
  ["unicode string", "a == 'Zürich 日本 😀'", '(== a "Zürich 日本 😀")'],
  ["empty string", "a == ''", '(== a "")'],
  ["integer", "a == 42", "(== a #42)"],
  ["decimal", "a == 12.50", "(== a #12.50)"],
  ["negative", "a == -3", "(== a #-3)"],
  ["negative decimal", "a > -0.5", "(> a #-0.5)"],
  ["true", "a == true", "(== a true)"],
  ["FALSE", "a == FALSE", "(== a false)"],
  ["null", "a == null", "(== a null)"],
  ["NULL", "a != NULL", "(!= a null)"],
  ["instant Z", "a > 2024-05-01T10:00:00.000Z", "(> a instant:2024-05-01T10:00:00.000Z)"],
  ["instant offset", "a > 2024-05-01T12:00:00+02:00", "(> a instant:2024-05-01T10:00:00.000Z)"],
  ["instant negative offset no colon", "a > 2024-05-01T05:30-0430", "(> a instant:2024-05-01T10:00:00.000Z)"],
  ["instant without seconds", "a > 2024-05-01T10:00Z", "(> a instant:2024-05-01T10:00:00.000Z)"],
  [
    "instant with nanoseconds",
    "a > 2024-05-01T10:00:00.123456789Z",
    "(> a instant:2024-05-01T10:00:00.123Z)",
  ],
  ["instant year 1", "a > 0001-01-01T00:00:00Z", "(> a instant:0001-01-01T00:00:00.000Z)"],
  ["date", "a == 2024-05-01", "(== a date:2024-05-01)"],
  ["leap day", "a == 2024-02-29", "(== a date:2024-02-29)"],
  ["time hh:mm", "a < 10:00", "(< a time:10:00:00.000)"],
  ["time hh:mm:ss", "a < 10:00:30", "(< a time:10:00:30.000)"],
  ["time with ms", "a < 23:59:59.5", "(< a time:23:59:59.500)"],
  ["time one-digit hour", "a < 9:05", "(< a time:09:05:00.000)"],
  ["duration minutes", "a == 90 minutes", "(== a duration:5400000ms)"],
  ["duration singular", "a == 1 hour", "(== a duration:3600000ms)"],
  ["duration plural", "a == 2 hours", "(== a duration:7200000ms)"],
  ["duration seconds", "a == 30 seconds", "(== a duration:30000ms)"],
  ["duration days, any case", "a == 2 DAYS", "(== a duration:172800000ms)"],
  ["duration()", "a == duration(1 day)", "(== a duration:86400000ms)"],
  ["DURATION()", "a == DURATION(15 minutes)", "(== a duration:900000ms)"],
  ["negative duration", "a > -5 minutes", "(> a duration:-300000ms)"],
  // NOW()
  ["NOW()", "a < NOW()", "(< a NOW())"],
  ["NOW() + h", "a < NOW() + 2 h", "(< a NOW()+7200000ms)"],
  ["NOW() - d", "a < NOW() - 1d", "(< a NOW()-86400000ms)"],
  ["NOW() ms", "a < NOW()+500ms", "(< a NOW()+500ms)"],
  ["NOW() s", "a < NOW() - 30 s", "(< a NOW()-30000ms)"],
  ["NOW() m is minutes", "a < NOW() - 5m", "(< a NOW()-300000ms)"],
  ["NOW() on the left", "NOW() > a", "(> NOW() a)"],
  ["a field named now", "now == 1", "(== now #1)"],
  // IN / NOTIN
  ["IN [..]", "a IN ['x', 'y']", '(IN a ["x" "y"])'],
  ["IN (..)", "a IN (1, 2, 3)", "(IN a [#1 #2 #3])"],
  ["IN one value", "a IN [1]", "(IN a [#1])"],
  ["NOTIN", "a NOTIN ['x']", '(NOTIN a ["x"])'],
  ["NOT IN (two words)", "a NOT IN ['x']", '(NOTIN a ["x"])'],
  [
    "IN with mixed literals",
    "a in [null, 2024-05-01, 10:00, true]",
    "(IN a [null date:2024-05-01 time:10:00:00.000 true])",
  ],
  [
    "IN sub-query",
    "UID IN (SELECT JobId FROM JobAllocations WHERE Status == 'Complete')",
    '(IN UID (SELECT JobId FROM JobAllocations WHERE (== Status "Complete")))',
  ],
  [
    "NOTIN sub-query",
    "a NOTIN (select b from C where d == 1 and e == 2)",
    "(NOTIN a (SELECT b FROM C WHERE (and (== d #1) (== e #2))))",
  ],
  ["sub-query without WHERE", "a IN (SELECT b FROM C)", "(IN a (SELECT b FROM C))"],
  [
    "sub-query selecting a path",
    "a IN (SELECT B.Name FROM C WHERE x == 1)",
    "(IN a (SELECT B.Name FROM C WHERE (== x #1)))",
  ],
  [
    "nested sub-query",
    "a IN (SELECT b FROM C WHERE d IN (SELECT e FROM F WHERE g == 1))",
    "(IN a (SELECT b FROM C WHERE (IN d (SELECT e FROM F WHERE (== g #1)))))",
  ],
  // INCLUDES / EXCLUDES
  ["INCLUDES literal", "Tags INCLUDES 'red'", '(INCLUDES Tags ["red"])'],
  ["INCLUDES list", "Tags INCLUDES ['red', 'blue']", '(INCLUDES Tags ["red" "blue"])'],
  ["EXCLUDES (..)", "Tags excludes ('red')", '(EXCLUDES Tags ["red"])'],
];

describe("parseFilter accepts the grammar", () => {
  test.each(VALID)("%s: %s", (_rule, filter, tree) => expectTree(filter, tree));
});

describe("SPEC.md §4 examples", () => {
  const EXAMPLES: [string, string][] = [
    ["Region.Name == 'North' AND Duration > 60", '(and (== Region.Name "North") (> Duration #60))'],
    ["Start >= 2024-05-01T10:00:00.000Z", "(>= Start instant:2024-05-01T10:00:00.000Z)"],
    ["Start >= '2024-05-01T10:00:00.000Z'", '(>= Start "2024-05-01T10:00:00.000Z")'],
    ["Email == null OR Phone != null", "(or (== Email null) (!= Phone null))"],
    ["Name LIKE 'JOB-%' AND Name LIKE '_OB%'", '(and (LIKE Name "JOB-%") (LIKE Name "_OB%"))'],
    ["JobStatus IN ['Queued', 'Dispatched']", '(IN JobStatus ["Queued" "Dispatched"])'],
    ["Start < NOW() + 2 h", "(< Start NOW()+7200000ms)"],
    [
      "Duration == duration(1 day) OR Duration < 90 minutes",
      "(or (== Duration duration:86400000ms) (< Duration duration:5400000ms))",
    ],
    ["UserTypes INCLUDES 'Scheduler'", '(INCLUDES UserTypes ["Scheduler"])'],
  ];
  test.each(EXAMPLES)("%s", (filter, tree) => expectTree(filter, tree));
});

describe("positions", () => {
  test("every node carries offset, line and column", () => {
    const tree = parseFilter("a == 1 AND\n  NOT b IN ['x']");
    expect(tree.kind).toBe("and");
    if (tree.kind !== "and") return;
    const [first, second] = tree.operands;
    expect(first?.position).toEqual({ offset: 0, line: 1, column: 1 });
    expect(second?.position).toEqual({ offset: 13, line: 2, column: 3 });
    if (second?.kind !== "not" || second.operand.kind !== "in" || !Array.isArray(second.operand.source))
      throw new Error("shape");
    expect(second.operand.position).toEqual({ offset: 17, line: 2, column: 7 });
    expect(second.operand.operatorPosition).toEqual({ offset: 19, line: 2, column: 9 });
    expect(second.operand.source[0]?.position).toEqual({ offset: 23, line: 2, column: 13 });
  });

  test("paths keep each segment's position", () => {
    const tree = parseFilter("Region.Name == 'x'");
    if (tree.kind !== "compare" || tree.left.kind !== "path") throw new Error("shape");
    expect(tree.left.segments.map((segment) => segment.position.column)).toEqual([1, 8]);
    expect(tree.right.position).toEqual({ offset: 15, line: 1, column: 16 });
  });
});

describe("limits", () => {
  test(`nesting up to ${MAX_FILTER_DEPTH} levels parses`, () => {
    const depth = MAX_FILTER_DEPTH;
    expect(() => parseFilter(`${"(".repeat(depth)}a == 1${")".repeat(depth)}`)).not.toThrow();
  });

  test("deep NOT chains and long AND chains do not blow the stack", () => {
    expect(() => parseFilter("NOT ".repeat(5000))).toThrow(FilterParseError);
    const chain = Array.from({ length: 700 }, (_, i) => `a == ${i}`).join(" AND ");
    expect(() => parseFilter(chain)).not.toThrow();
  });

  test("durations and NOW() offsets up to the longest Duration (2^31 − 1 minutes) parse exactly", () => {
    expectTree("a == 2147483647 minutes", "(== a duration:128849018820000ms)");
    expectTree("a > -2147483647 minutes", "(> a duration:-128849018820000ms)");
    expectTree("a == duration(128849018820000 ms)", "(== a duration:128849018820000ms)");
    expectTree("a < NOW() - 1491308 days", "(< a NOW()-128849011200000ms)");
    // One more is refused (filter-errors.test.ts), so no accepted amount can lose precision.
    expect(() => parseFilter("a == 128849018820001 ms")).toThrow(FilterParseError);
  });

  test("limits are options", () => {
    expect(() => parseFilter("a == 1", { maxLength: 3 })).toThrow(FilterParseError);
    expect(() => parseFilter("((a == 1))", { maxDepth: 1 })).toThrow(FilterParseError);
  });
});
