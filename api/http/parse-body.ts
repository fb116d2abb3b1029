/** Request bodies and query strings checked against a zod schema at the trust boundary. */
import type { z } from "zod";
import { BadRequestError, type ErrorDetail, ValidationError } from "../../common/errors.ts";
import { illFormedTextDetails } from "../model/well-formed-text.ts";

/**
 * A zod error's issues as error details; an issue of the whole value gets the path `(part)`. A value
 * of the wrong type gets that problem alone: zod still measures it against the bounds of the type it
 * should have had ("expected array, received string", then "expected string to have <=3 characters").
 */
export function detailsOf(error: z.ZodError, part = "body"): ErrorDetail[] {
  const pathOf = (issue: z.core.$ZodIssue) => issue.path.join(".") || `(${part})`;
  const mistyped = new Set(error.issues.filter((issue) => issue.code === "invalid_type").map(pathOf));
  return error.issues
    .filter((issue) => issue.code === "invalid_type" || !mistyped.has(pathOf(issue)))
    .map((issue) => ({ path: pathOf(issue), message: issue.message }));
}

/** The parsed value, or a ValidationError naming `part` and listing every problem. */
function check<S extends z.ZodType>(schema: S, value: object, part: "body" | "query string"): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new ValidationError(`the request ${part} is invalid`, detailsOf(parsed.error, part));
}

/**
 * An already-decoded body that must be a JSON object whose text is well-formed Unicode.
 * @throws BadRequestError when it is no object, ValidationError naming each string holding a lone surrogate.
 */
export function asJsonObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new BadRequestError("the request body must be a JSON object");
  }
  const illFormed = illFormedTextDetails(body);
  if (illFormed.length > 0) throw new ValidationError("the request body is invalid", illFormed);
  return body as Record<string, unknown>;
}

/**
 * Parses an already-decoded JSON body.
 * @throws BadRequestError when there is no JSON object, ValidationError listing every problem.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  return check(schema, asJsonObject(body), "body");
}

/** Parses a decoded query string. @throws ValidationError listing every problem. */
export function parseQuery<S extends z.ZodType>(schema: S, query: Record<string, unknown>): z.infer<S> {
  return check(schema, { ...query }, "query string");
}
