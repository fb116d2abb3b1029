import { expect, test } from "bun:test";
import { fillTemplate, readTemplate } from "../../../api/store/postgres/read-template.ts";

const TEXT = `SELECT 'a ? b', "c?" FROM t WHERE t.x = ? AND t.name = ? AND t.uid = ? ORDER BY t.uid LIMIT ?::int8 OFFSET ?::int8`;
const template = readTemplate(TEXT, [
  { value: 2.5 },
  { value: "it's" },
  { slot: 0 },
  { slot: 1 },
  { slot: 2 },
]);

test("constants are written in as literals; the marks inside quotes are text, not placeholders", () => {
  const { sql, params } = fillTemplate(template, ["u-1", 20, 0]);
  expect(sql).toBe(
    `SELECT 'a ? b', "c?" FROM t WHERE t.x = '2.5'::float8 AND t.name = E'it''s' AND t.uid = $1 ORDER BY t.uid LIMIT 20::int8 OFFSET 0::int8`,
  );
  expect(params).toEqual(["u-1"]);
});

test("a request's numbers are written in, its text bound and numbered after the parameters bound before it", () => {
  const { sql, params } = fillTemplate(template, ["u-2", 5, 40], 2);
  expect(sql).toContain("t.uid = $3 ORDER BY t.uid LIMIT 5::int8 OFFSET 40::int8");
  expect(params).toEqual(["u-2"]);
});

test("a text whose placeholders and values do not pair up is refused", () => {
  expect(() => readTemplate("SELECT ?", [])).toThrow("1 placeholders for 0 values");
});
