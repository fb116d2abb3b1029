/**
 * The filter compiler: WHERE text, bound params and joins for checked filters, in SQLite's dialect
 * (and run there) and in PostgreSQL's (run by test/eql/postgres-differential.test.ts).
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { prepareFilter } from "../../../api/eql/check-filter.ts";
import type { ObjectDef } from "../../../api/model/catalogue.ts";
import { makeField, standardObject } from "../../../api/model/field-factory.ts";
import type { FieldValue } from "../../../api/model/record-values.ts";
import { numberPlaceholders, postgresDialect } from "../../../api/store/postgres/postgres-dialect.ts";
import { compileFilter, type SqlFilter } from "../../../api/store/sql/compile-filter.ts";
import { quoteIdent } from "../../../api/store/sql/quote-ident.ts";
import { type ColumnValue, createTableSql, encodeValue } from "../../../api/store/sqlite/record-codec.ts";
import { sqliteDialect } from "../../../api/store/sqlite/sqlite-dialect.ts";
import { TEST_CATALOGUE, testObject } from "../../eql/support/test-catalogue.ts";

const NOW = Date.UTC(2024, 4, 1, 10);
const compile = (filter: string, object = "Things"): SqlFilter<ColumnValue> =>
  compileFilter(prepareFilter(filter, testObject(object), TEST_CATALOGUE), sqliteDialect, {
    tableRef: (target) => quoteIdent(`tenant1_${target.mapping}`),
    alias: "r",
    now: NOW,
  });

const OWNER_JOIN = 'LEFT JOIN "tenant1_owners" AS "r_1" ON "r_1"."uid" = "r"."owner"';
const ESCAPE = "ESCAPE '\\'";
const TEXT = "CAST(? AS TEXT)";

const CASES: [filter: string, where: string, params: (string | number | null)[], joins?: string[]][] = [
  ["Name == 'x'", `"r"."name" = ${TEXT}`, ["x"]],
  ["Name != 'x'", `"r"."name" <> ${TEXT}`, ["x"]],
  ["Count < 5 AND Count >= -1", '("r"."count" < ? AND "r"."count" >= ?)', [5, -1]],
  ["Count > 1 OR NOT Count <= 0", '("r"."count" > ? OR (NOT "r"."count" <= ?))', [1, 0]],
  ["Flag == true", '"r"."flag" = ?', [1]],
  ["Flag != false", '"r"."flag" <> ?', [0]],
  ["Price >= 12.50", 'CAST("r"."price" AS REAL) >= ?', [12.5]],
  ["Minutes == 2 hours", '"r"."minutes" = ?', [120]],
  ["At > 2024-05-01T12:00:00+02:00", '"r"."at" > ?', [NOW]],
  ["At < NOW() - 1 h", '"r"."at" < ?', [NOW - 3_600_000]],
  ["Day == NOW() + 1 d", `"r"."day" = ${TEXT}`, ["2024-05-02"]],
  ["Clock > NOW()", `"r"."clock" > ${TEXT}`, ["10:00:00.000"]],
  ["Clock <= 9:30", `"r"."clock" <= ${TEXT}`, ["09:30:00.000"]],
  ["Name == null", '"r"."name" IS NULL', []],
  ["Name != null", '(NOT "r"."name" IS NULL)', []],
  ["Count > null", "NULL", []],
  ["Name LIKE 'a\\%b%'", `"r"."name" LIKE ${TEXT} ${ESCAPE}`, ["a\\%b%"]],
  ["Name LIKE 'a\\b'", `"r"."name" LIKE ${TEXT} ${ESCAPE}`, ["ab"]],
  ["Name NOTLIKE '_'", `(NOT "r"."name" LIKE ${TEXT} ${ESCAPE})`, ["_"]],
  ["Count IN [1, 2]", '"r"."count" IN (?, ?)', [1, 2]],
  ["Kind NOTIN ['Alpha', null]", `(NOT ("r"."kind" IN (${TEXT}) OR "r"."kind" IS NULL))`, ["Alpha"]],
  ["Price IN [1.50]", 'CAST("r"."price" AS REAL) IN (?)', [1.5]],
  ["Count == Minutes", '"r"."count" IS "r"."minutes"', []],
  ["Count != Minutes", '"r"."count" IS NOT "r"."minutes"', []],
  ["Count < Price", '"r"."count" < CAST("r"."price" AS REAL)', []],
  [
    "Tags INCLUDES ['red', 'Green']",
    `(CASE WHEN "r"."tags" IS NULL THEN NULL ELSE EXISTS (SELECT 1 FROM json_each("r"."tags") AS "r_1" WHERE "r_1"."value" IN (${TEXT}, ${TEXT})) END)`,
    ["red", "Green"],
  ],
  ["OwnerId == 'o1'", `"r"."owner" = ${TEXT}`, ["o1"]],
  ["Owner.Name == 'x'", `"r_1"."name" = ${TEXT}`, ["x"], [OWNER_JOIN]],
  [
    "Owner.Name == 'x' AND Owner.Score > 1 AND Owner.Parent.Name == 'y' AND Backup.Name == 'z'",
    `("r_1"."name" = ${TEXT} AND "r_1"."score" > ? AND "r_2"."name" = ${TEXT} AND "r_3"."name" = ${TEXT})`,
    ["x", 1, "y", "z"],
    [
      OWNER_JOIN,
      'LEFT JOIN "tenant1_owners" AS "r_2" ON "r_2"."uid" = "r_1"."parent"',
      'LEFT JOIN "tenant1_owners" AS "r_3" ON "r_3"."uid" = "r"."backup"',
    ],
  ],
  [
    "OwnerId IN (SELECT UID FROM Owners WHERE Parent.Score > 3 AND Parent.Name != 'p')",
    `"r"."owner" IN (SELECT "r_1"."uid" FROM "tenant1_owners" AS "r_1" LEFT JOIN "tenant1_owners" AS "r_2" ON "r_2"."uid" = "r_1"."parent" WHERE "r_1"."uid" IS NOT NULL AND ("r_2"."score" > ? AND "r_2"."name" <> ${TEXT}))`,
    [3, "p"],
  ],
  [
    "Count NOTIN (SELECT Rank FROM Owners)",
    '(NOT "r"."count" IN (SELECT CAST("r_1"."rank" AS REAL) FROM "tenant1_owners" AS "r_1" WHERE CAST("r_1"."rank" AS REAL) IS NOT NULL))',
    [],
  ],
];

describe("compileFilter", () => {
  test.each(CASES)("%s", (filter, where, params, joins = []) => {
    expect(compile(filter)).toEqual({ where, params, joins });
  });

  test("values are only ever bound, never spliced", () => {
    const hostile = `x'); DROP TABLE things; --`;
    const sql = compile(`Name == "${hostile}" OR Name LIKE "${hostile}" OR Name IN ["${hostile}"]`);
    expect(sql.where).not.toContain("DROP");
    expect(sql.params).toEqual([hostile, hostile, hostile]);
  });

  test("identifiers are quoted", () => {
    const object = standardObject("Odd", "Odd", { Weird: { type: "string", mapping: 'we"ird' } });
    const catalogue = { tenantId: "t", version: 1, objects: [object] };
    const sql = compileFilter(prepareFilter("Weird == 'a'", object, catalogue), sqliteDialect, {
      tableRef: () => quoteIdent("odd"),
      alias: 'a"b',
      now: 0,
    });
    expect(sql.where).toBe(`"a""b"."we""ird" = ${TEXT}`);
  });

  test("custom fields compile with their mapping", () => {
    const object = standardObject("Things2", "Thing", {});
    object.fields.push(makeField("Things2", "Custom", { type: "int", mapping: "__custom", custom: true }));
    const catalogue = { tenantId: "t", version: 1, objects: [object] };
    const sql = compileFilter(prepareFilter("Custom >= 3", object, catalogue), sqliteDialect, {
      tableRef: (target) => quoteIdent(target.mapping),
      alias: "x",
      now: 0,
    });
    expect(sql).toEqual({ where: '"x"."__custom" >= ?', params: [3], joins: [] });
  });

  test("extended filters are not compiled", () => {
    const filter = prepareFilter("Current.Count == 1", testObject("Things"), TEST_CATALOGUE, {
      mode: "extended",
    });
    expect(() =>
      compileFilter(filter, sqliteDialect, {
        tableRef: (object) => quoteIdent(object.mapping),
        alias: "r",
        now: 0,
      }),
    ).toThrow();
  });
});

describe("the SQL runs in SQLite", () => {
  const db = new Database(":memory:");
  const insert = (object: ObjectDef, values: Record<string, FieldValue>) => {
    const row = object.fields.map((field) => encodeValue(field, values[field.name] ?? null));
    const table = quoteIdent(`tenant1_${object.mapping}`);
    db.prepare(`INSERT INTO ${table} VALUES (${row.map(() => "?").join(",")})`).run(...row);
  };
  const things = testObject("Things");
  const owners = testObject("Owners");
  for (const object of [things, owners]) db.run(createTableSql(`tenant1_${object.mapping}`, object));
  insert(owners, { UID: "o1", Name: "Olga", Score: 5 });
  insert(things, { UID: "t1", Name: "100% Abc", Owner: "o1", Tags: ["red"], Price: "9.5" });
  insert(things, { UID: "t2", Name: "100 abc", Owner: "gone", Tags: [], Price: "10" });

  const run = (filter: string) => {
    const sql = compile(filter);
    const text = `SELECT "r"."uid" AS uid FROM "tenant1_things" AS "r" ${sql.joins.join(" ")} WHERE ${sql.where} ORDER BY 1`;
    return db
      .query<{ uid: string }, (string | number | null)[]>(text)
      .all(...sql.params)
      .map((row) => row.uid);
  };

  const RUNS: [string, string[]][] = [
    ["Name LIKE '100\\% a%'", ["t1"]],
    ["Name LIKE '100_a%'", ["t2"]],
    ["Owner.Score == 5", ["t1"]],
    ["Owner.Name == null", ["t2"]],
    ["Tags EXCLUDES 'red'", ["t2"]],
    ["Price < 10", ["t1"]],
    ["OwnerId IN (SELECT UID FROM Owners WHERE Name LIKE 'o%')", ["t1"]],
  ];
  test.each(RUNS)("%s", (filter, uids) => expect(run(filter)).toEqual(uids));
});

describe("compileFilter in PostgreSQL's dialect", () => {
  const compilePostgres = (filter: string) => {
    const sql = compileFilter(prepareFilter(filter, testObject("Things"), TEST_CATALOGUE), postgresDialect, {
      tableRef: (target) => quoteIdent(`tenant1_${target.mapping}`),
      alias: "r",
      now: NOW,
    });
    return { ...sql, where: postgresDialect.statement(sql.where) };
  };
  const POSTGRES_CASES: [filter: string, where: string, params: (string | number | boolean)[]][] = [
    ["Name == 'x' AND Count < 5", '("r"."name" = $1 AND "r"."count" < $2)', ["x", 5]],
    ["Flag == true", '"r"."flag" = $1', [true]],
    ["Price >= 12.50", '"r"."price"::float8 >= $1', [12.5]],
    ["At < NOW() - 1 h", '"r"."at" < $1', [NOW - 3_600_000]],
    ["Name != null", '(NOT "r"."name" IS NULL)', []],
    ["Count > null", "NULL::boolean", []],
    ["Name NOTLIKE 'a\\%b%'", `(NOT "r"."name" ILIKE $1 ESCAPE E'\\\\')`, ["a\\%b%"]],
    ["Count == Minutes", '"r"."count" IS NOT DISTINCT FROM "r"."minutes"', []],
    ["Count != Price", '"r"."count" IS DISTINCT FROM "r"."price"::float8', []],
    ["Tags INCLUDES ['red', 'Green']", '"r"."tags" && ARRAY[$1, $2]::text[]', ["red", "Green"]],
    ["Kind IN ['Alpha', null]", '("r"."kind" IN ($1) OR "r"."kind" IS NULL)', ["Alpha"]],
  ];
  test.each(POSTGRES_CASES)("%s", (filter, where, params) => {
    expect(compilePostgres(filter)).toEqual({ where, params, joins: [] });
  });
  test("placeholders are numbered in textual order, never inside quotes", () => {
    expect(
      numberPlaceholders(
        `a = ? AND "we?ird" = ? AND b LIKE ? ESCAPE E'\\\\' AND c = '?''?' AND e = E'\\'?' OR d IN (?, ?)`,
      ),
    ).toBe(
      `a = $1 AND "we?ird" = $2 AND b LIKE $3 ESCAPE E'\\\\' AND c = '?''?' AND e = E'\\'?' OR d IN ($4, $5)`,
    );
  });
});
