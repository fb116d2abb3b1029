/** Request bodies checked against a zod schema at the trust boundary. */
import type { z } from "zod";
import { BadRequestError, ValidationError } from "../../common/errors.ts";

/**
 * Parses an already-decoded JSON body.
 * @throws BadRequestError when there is no JSON object, ValidationError listing every problem.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  if (body === undefined || body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new BadRequestError("the request body must be a JSON object");
  }
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  throw new ValidationError(
    "the request body is invalid",
    parsed.error.issues.map((issue) => ({ path: issue.path.join(".") || "(body)", message: issue.message })),
  );
}
