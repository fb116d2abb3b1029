import { expect, test } from "bun:test";
import { z } from "zod";
import { parseBody } from "../../api/http/parse-body.ts";
import { ValidationError } from "../../common/errors.ts";

const Schema = z.object({
  roles: z
    .array(z.enum(["administrator", "scheduler"]))
    .min(1)
    .max(2)
    .optional(),
  name: z.string().max(3),
});

const problems = (body: unknown) => {
  try {
    parseBody(Schema, body);
  } catch (error) {
    if (error instanceof ValidationError) return error.details ?? [];
    throw error;
  }
  return [];
};

test("a value of the wrong type is one problem, not also measured against the bounds of the right type", () => {
  expect(problems({ roles: "administrator", name: "abc" })).toEqual([
    { path: "roles", message: "Invalid input: expected array, received string" },
  ]);
});

test("every other problem is still listed, each at its path", () => {
  expect(problems({ roles: [], name: "abcd" }).map((p) => p.path)).toEqual(["roles", "name"]);
  expect(problems({ roles: "x", name: "abcd" }).map((p) => p.path)).toEqual(["roles", "name"]);
});
