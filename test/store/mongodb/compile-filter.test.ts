/**
 * The EQL → MQL compiler (api/store/mongodb/query/) by its output: the `$match` of chosen filters
 * (the three-valued logic spelled out), LIKE's regular expressions (valid in both dialects,
 * ASCII-only folding, no `$`, linear time on the pattern that makes a backtracking regex explode),
 * and the typed errors for what the server would refuse: a regex past its length limit, more
 * nested sub-pipelines than it runs, extended filters. What the pipelines select is the
 * differential test's (test/eql/mongodb-differential.test.ts).
 */

import { describe, expect, test } from "bun:test";
import type { Document } from "mongodb";
import { MAX_LIKE_PATTERN } from "../../../api/eql/check-comparison.ts";
import { prepareFilter } from "../../../api/eql/check-filter.ts";
import type { CheckedCondition } from "../../../api/eql/checked-filter.ts";
import { canonicalLikePattern, matchesLike } from "../../../api/eql/like-pattern.ts";
import { MAX_FILTER_DEPTH } from "../../../api/eql/parse-filter.ts";
import { parseOrderBy } from "../../../api/eql/parse-order-by.ts";
import {
  LIKE_REGEX_OPTIONS,
  likeRegex,
  MAX_REGEX_BYTES,
} from "../../../api/store/mongodb/query/like-regex.ts";
import {
  countPipeline,
  listPipeline,
  relatedPipeline,
} from "../../../api/store/mongodb/query/list-pipeline.ts";
import { MQL_COLLATION } from "../../../api/store/mongodb/query/mql-layout.ts";
import {
  MAX_PIPELINE_DEPTH,
  MAX_STAGES,
  MAX_SUB_PIPELINES,
  withinServerLimits,
} from "../../../api/store/mongodb/query/server-limits.ts";
import { BadRequestError, LimitExceededError } from "../../../common/errors.ts";
import { TEST_LAYOUT } from "../../eql/support/mingo-store.ts";
import { TEST_CATALOGUE, testObject } from "../../eql/support/test-catalogue.ts";
import { TEXTS } from "../../eql/support/value-pools.ts";

const NOW = Date.UTC(2024, 4, 1, 10);
const things = testObject("Things");

/** The pipeline counting the Things a filter selects. */
const pipelineOf = (text: string, object = things) =>
  countPipeline(object, prepareFilter(text, object, TEST_CATALOGUE, { maxDepth: 1000 }), NOW, TEST_LAYOUT);
/** The filter's `$match` (the stage before `$count`). */
const matchOf = (text: string) => (pipelineOf(text).at(-2) as Document).$match as Document;

const NEVER = { $expr: false };

describe("three-valued logic in query documents", () => {
  test.each<[string, Document]>([
    ["Count > 1", { "d.count": { $gt: 1 } }],
    // NOT of unknown stays unknown: a record without Count matches neither Count > 1 nor its NOT.
    ["NOT Count > 1", { "d.count": { $lte: 1 } }],
    ["Count != 1", { "d.count": { $nin: [1, null] } }],
    ["NOT Count == 1", { "d.count": { $nin: [1, null] } }],
    ["NOT Count != 1", { "d.count": { $eq: 1 } }],
    ["Count == null", { "d.count": null }],
    ["NOT Count == null", { "d.count": { $ne: null } }],
    ["Count < null", NEVER],
    ["NOT Count < null", NEVER],
    ["Count > 1 OR Count < null", { "d.count": { $gt: 1 } }],
    ["NOT (Count > 1 AND Minutes < 5)", { $or: [{ "d.count": { $lte: 1 } }, { "d.minutes": { $gte: 5 } }] }],
    // A decimal is compared through its double shadow, a datetime as a BSON date.
    ["Price == 0.10", { "d.price:num": { $eq: 0.1 } }],
    ["At >= 2024-05-01T10:00:00Z", { "d.at": { $gte: new Date(NOW) } }],
    ["At < NOW() - 1h", { "d.at": { $lt: new Date(NOW - 3_600_000) } }],
    ["Kind IN ['Alpha', null]", { "d.kind": { $in: ["Alpha", null] } }],
    ["Kind NOTIN ['Alpha', null]", { "d.kind": { $nin: ["Alpha", null] } }],
    ["Tags INCLUDES 'red'", { "d.tags": { $in: ["red"] } }],
    ["Tags EXCLUDES 'red'", { "d.tags": { $type: "array", $nin: ["red"] } }],
    // Field to field: == is null-safe (missing and null alike); < needs both sides present.
    ["Name == Note", { $expr: { $eq: [{ $ifNull: ["$d.name", null] }, { $ifNull: ["$d.note", null] }] } }],
    [
      "NOT Name == Note",
      { $expr: { $ne: [{ $ifNull: ["$d.name", null] }, { $ifNull: ["$d.note", null] }] } },
    ],
    [
      "Name < Note",
      {
        $and: [
          { "d.name": { $ne: null } },
          { "d.note": { $ne: null } },
          { $expr: { $lt: ["$d.name", "$d.note"] } },
        ],
      },
    ],
    ["Name LIKE 'a_%'", { "d.name": { $regex: "^[aA][\\s\\S]", $options: "u" } }],
    ["Name NOTLIKE 'a'", { "d.name": { $ne: null, $not: { $regex: "^[aA](?![\\s\\S])", $options: "u" } } }],
  ])("%s", (text, match) => {
    expect(matchOf(text)).toEqual(match);
  });

  test("nested ANDs and ORs are flattened", () => {
    expect(matchOf("Count > 1 AND (Minutes > 2 AND (Flag == true AND Name == 'x'))")).toEqual({
      $and: [
        { "d.count": { $gt: 1 } },
        { "d.minutes": { $gt: 2 } },
        { "d.flag": { $eq: true } },
        { "d.name": { $eq: "x" } },
      ],
    });
  });

  test("a lookup path is joined once, on the UID alone, keeping this tenant's record of the target", () => {
    const owners = testObject("Owners");
    const pipeline = pipelineOf("Owner.Name == 'a' OR Owner.Score > 1 OR Owner.UID == 'owner-01'");
    expect(pipeline.filter((stage) => stage.$lookup)).toEqual([
      { $lookup: { from: "Owners", localField: "d.owner", foreignField: "u", as: "_eql_j1" } },
    ]);
    const inScope = [
      { $eq: ["$$joined.t", { $literal: "t1" }] },
      { $eq: ["$$joined.o", { $literal: owners.id }] },
    ];
    expect(pipeline[2]).toEqual({
      $set: {
        _eql_j1: {
          $arrayElemAt: [{ $filter: { input: "$_eql_j1", as: "joined", cond: { $and: inScope } } }, 0],
        },
      },
    });
    expect(pipeline[3]).toEqual({
      $match: {
        $or: [
          { "_eql_j1.d.name": { $eq: "a" } },
          { "_eql_j1.d.score": { $gt: 1 } },
          { "_eql_j1.u": { $eq: "owner-01" } },
        ],
      },
    });
  });

  test("a record's UID is read at the layout's UID path (indexed with the scope), not among its values", () => {
    expect(matchOf("UID > 'thing-05' AND OwnerId == 'owner-01'")).toEqual({
      $and: [{ u: { $gt: "thing-05" } }, { "d.owner": { $eq: "owner-01" } }],
    });
  });

  test("pipelines run under the simple collation (code-point order)", () => {
    expect(MQL_COLLATION).toEqual({ locale: "simple" });
  });

  test("an extended filter is refused with a typed error", () => {
    const extended = prepareFilter("Current.Count > 1", things, TEST_CATALOGUE, { mode: "extended" });
    expect(() => countPipeline(things, extended, NOW, TEST_LAYOUT)).toThrow(BadRequestError);
  });

  test("a page of no records is no `$limit: 0` (which the server refuses)", () => {
    const order = parseOrderBy(null, things, TEST_CATALOGUE);
    const list = listPipeline(
      things,
      { filter: null, order, after: null, offset: 0, limit: 0, now: NOW },
      TEST_LAYOUT,
    );
    expect(JSON.stringify(list)).not.toContain('"$limit":0');
    const related = relatedPipeline(
      things,
      things.fields[0] as never,
      ["x"],
      { filter: null, order, limit: 0, now: NOW },
      TEST_LAYOUT,
    );
    expect(JSON.stringify(related)).not.toContain('"$limit":0');
  });
});

describe("LIKE as a regular expression", () => {
  const regexOf = (written: string) =>
    new RegExp(likeRegex(canonicalLikePattern(written)), LIKE_REGEX_OPTIONS);
  const PATTERNS = [
    "",
    "%",
    "%%",
    "_",
    "a",
    "A%",
    "%b",
    "a%b",
    "%a%b%",
    "a_c",
    "\\%",
    "\\_",
    "\\\\",
    "100\\%%",
    "^$.*+?()[]{}|/",
    "é%",
    "É",
    "😀",
    "_😀_",
    "%\u0000%",
    "line%break",
    "%a%a%a%b",
    "k",
    "s",
    "ß",
  ];

  test.each(PATTERNS)(
    "%p is a valid JavaScript u-mode regex matching exactly what matchesLike matches",
    (written) => {
      const regex = regexOf(written);
      const canonical = canonicalLikePattern(written);
      const values = [
        ...TEXTS,
        "\u212A",
        "\u017F",
        "a\u0000b",
        "line\nbreak\n",
        "abc\n",
        "^$.*+?()[]{}|/",
        "aab",
        "ab",
      ];
      for (const value of values)
        expect([value, regex.test(value)]).toEqual([value, matchesLike(value, canonical)]);
    },
  );

  test("the end is anchored without `$` (PCRE's `$` also matches before a final newline), NUL is escaped", () => {
    const sources = PATTERNS.map((written) => likeRegex(canonicalLikePattern(written)));
    for (const source of sources) expect(source.replace(/\\\$/g, "")).not.toContain("$");
    expect(likeRegex("%\u0000%")).not.toContain("\u0000");
    expect(likeRegex("%\u0000%")).toContain("\\x00");
  });

  test("ASCII letters fold, nothing else does (no `i` option: Unicode folding would equate K and U+212A)", () => {
    expect(likeRegex("k")).toBe("^[kK](?![\\s\\S])");
    expect(LIKE_REGEX_OPTIONS).toBe("u");
  });

  // The attack: a pattern of many %-separated segments against a long value that almost matches.
  // As `^.*a.*a…b$` a backtracking engine (PCRE, JavaScript) tries O(n^k) splits; placed at their
  // first occurrences the segments are matched in one pass. Not timed (speed lives in bench/): the
  // backtracking form would run for years, past the test's timeout.
  test("thirty %a segments against 20,000 a's are decided", () => {
    const pattern = `${"%a".repeat(30)}%b`;
    const value = "a".repeat(20_000);
    expect(regexOf(pattern).test(value)).toBe(false);
    expect(regexOf(pattern).test(`${value}b`)).toBe(true);
  });

  test("a pattern whose regex the server would refuse as too long is a LimitExceededError", () => {
    // The checker's longest pattern (MAX_LIKE_PATTERN characters) stays within the server's limit,
    // at its costliest (a segment per character, each `_` a code point): the guard below is a backstop.
    const filter = `Name LIKE '${"%_".repeat(MAX_LIKE_PATTERN / 2)}'`;
    expect(() => pipelineOf(filter)).not.toThrow();
    const longestAccepted = Math.floor((MAX_REGEX_BYTES - "^(?![\\s\\S])".length) / 4);
    const source = likeRegex("a".repeat(longestAccepted));
    expect(Buffer.byteLength(source)).toBeLessThanOrEqual(MAX_REGEX_BYTES);
    expect(() => likeRegex("a".repeat(longestAccepted + 1))).toThrow(LimitExceededError);
    // Bytes, not characters: 😀 is 4 bytes in UTF-8.
    expect(() => likeRegex("😀".repeat(8_200))).toThrow(LimitExceededError);
  });
});

describe("the server's limits on a pipeline's shape", () => {
  type InSelect = Extract<CheckedCondition, { kind: "inSelect" }>;
  /**
   * `OwnerId IN (SELECT UID FROM Owners WHERE UID IN (SELECT ...))`, `depth` sub-queries deep, built
   * as a checked tree: EQL refuses sub-queries past 4 levels, but the lookups inside them add
   * sub-pipelines too, so the compiler's own guard must hold by itself.
   */
  const nestedSubQueries = (depth: number): Document[] => {
    const owners = testObject("Owners");
    const level = prepareFilter("UID IN (SELECT UID FROM Owners WHERE Score > 1)", owners, TEST_CATALOGUE)
      .condition as InSelect;
    let where = level.where;
    for (let i = 1; i < depth; i++) where = { ...level, where };
    const outer = prepareFilter(
      "OwnerId IN (SELECT UID FROM Owners WHERE Score > 1)",
      things,
      TEST_CATALOGUE,
    );
    const filter = { ...outer, condition: { ...(outer.condition as InSelect), where } };
    return countPipeline(things, filter, NOW, TEST_LAYOUT);
  };
  const bsonDepth = (value: unknown): number =>
    value === null || typeof value !== "object" || value instanceof Date
      ? 0
      : 1 + Math.max(0, ...Object.values(value as object).map(bsonDepth));
  const subPipelineDepth = (pipeline: readonly Document[]): number =>
    Math.max(
      0,
      ...pipeline.map((stage) => {
        const inner = (stage.$lookup as { pipeline?: Document[] } | undefined)?.pipeline;
        return inner ? 1 + subPipelineDepth(inner) : 0;
      }),
    );

  test(`${MAX_SUB_PIPELINES} nested sub-queries compile; one more is a LimitExceededError, not a server error`, () => {
    expect(subPipelineDepth(nestedSubQueries(MAX_SUB_PIPELINES))).toBe(MAX_SUB_PIPELINES);
    expect(() => nestedSubQueries(MAX_SUB_PIPELINES + 1)).toThrow(LimitExceededError);
  });

  test(`the deepest filter EQL parses (${MAX_FILTER_DEPTH} levels of alternating AND and OR) compiles within the server's limits`, () => {
    // NOT adds no level (it flips the truth compiled for), nested ANDs or ORs are flattened: the
    // deepest MQL comes from strict alternation, each level an `$and`/`$or` array and a member.
    let deepest = "";
    for (let text = "Name < Note", i = 0; ; i++) {
      try {
        prepareFilter(text, things, TEST_CATALOGUE);
      } catch {
        break;
      }
      deepest = text;
      text = `(Name == 'x' ${i % 2 === 0 ? "AND" : "OR"} ${text})`;
    }
    expect(deepest.split("(").length - 1).toBe(MAX_FILTER_DEPTH);
    const pipeline = countPipeline(things, prepareFilter(deepest, things, TEST_CATALOGUE), NOW, TEST_LAYOUT);
    expect(bsonDepth(pipeline)).toBeGreaterThan(120);
    expect(bsonDepth(pipeline)).toBeLessThanOrEqual(MAX_PIPELINE_DEPTH);
  });

  test("each limit is named when passed", () => {
    expect(() => withinServerLimits(Array.from({ length: MAX_STAGES + 1 }, () => ({ $limit: 1 })))).toThrow(
      /stages in one pipeline/,
    );
    let deep: unknown = 1;
    for (let i = 0; i < MAX_PIPELINE_DEPTH; i++) deep = [deep];
    expect(() => withinServerLimits([{ $set: { x: { $literal: deep } } }])).toThrow(/nested .* levels deep/);
  });
});
