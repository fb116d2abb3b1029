import { expect, test } from "bun:test";
import { ValidationError } from "../../common/errors.ts";
import { sqlLiteral } from "../../common/store/postgres/sql-literal.ts";

test("text is an escape string with its backslashes and quotes doubled, nothing else touched", () => {
  expect(sqlLiteral("plain")).toBe("E'plain'");
  expect(sqlLiteral("it's")).toBe("E'it''s'");
  expect(sqlLiteral("a\\'; DROP TABLE t; --")).toBe("E'a\\\\''; DROP TABLE t; --'");
  expect(sqlLiteral("$1 ? $$ \n ✓")).toBe("E'$1 ? $$ \n ✓'");
  expect(sqlLiteral("")).toBe("E''");
});

test("null, truth values and safe integers are themselves; other numbers are float8", () => {
  expect(sqlLiteral(null)).toBe("NULL");
  expect([sqlLiteral(true), sqlLiteral(false)]).toEqual(["TRUE", "FALSE"]);
  expect(sqlLiteral(-42)).toBe("-42");
  expect(sqlLiteral(Number.MAX_SAFE_INTEGER)).toBe("9007199254740991");
  expect(sqlLiteral(1.5)).toBe("'1.5'::float8");
  expect(sqlLiteral(1e-7)).toBe("'1e-7'::float8");
  expect(sqlLiteral(2 ** 60)).toBe("'1152921504606847000'::float8");
  expect(sqlLiteral(Number.NEGATIVE_INFINITY)).toBe("'-Infinity'::float8");
});

test("text holding U+0000 is refused as a ValidationError, as bound text is", () => {
  expect(() => sqlLiteral("a\u0000b")).toThrow(ValidationError);
});
