/**
 * A route's OpenAPI description from the zod schemas its handler validates with (the same
 * objects, turned into JSON Schema by zod), for the route's `detail`. Validation itself stays in the
 * handlers (parse-body.ts): as an Elysia route schema it would run before authentication and answer
 * in Elysia's shape, not ours.
 */
import { z } from "zod";

const jsonSchemaOf = (schema: z.ZodType) => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
  return rest;
};

/** The error body of SPEC.md §2, as every failure answers. */
const ERROR_BODY_SCHEMA = {
  type: "object",
  required: ["errorType", "message"],
  properties: {
    errorType: { type: "string" },
    message: { type: "string" },
    errorId: { type: "string" },
    details: {
      type: "array",
      items: {
        type: "object",
        required: ["path", "message"],
        properties: { path: { type: "string" }, message: { type: "string" } },
      },
    },
  },
};

export interface RouteDocInput {
  summary: string;
  tags: string[];
  /** The JSON body's schema (what the handler parses it with). */
  body?: z.ZodType;
  /** The query string's schema, an object of its parameters. */
  query?: z.ZodObject;
  /** What a success answers, described in words (the status is 200 unless given). */
  returns?: string;
  status?: number;
  /** No token needed. */
  isPublic?: boolean;
}

/** The OpenAPI operation fields for a route's `detail`. */
export function routeDoc(input: RouteDocInput) {
  const detail: Record<string, unknown> = {
    summary: input.summary,
    tags: input.tags,
    responses: {
      [String(input.status ?? 200)]: { description: input.returns ?? "Success" },
      default: {
        description: "An error in the shape of SPEC.md §2",
        content: { "application/json": { schema: ERROR_BODY_SCHEMA } },
      },
    },
  };
  if (input.isPublic) detail.security = [];
  if (input.body) {
    detail.requestBody = {
      required: true,
      content: { "application/json": { schema: jsonSchemaOf(input.body) } },
    };
  }
  if (input.query) {
    const schema = jsonSchemaOf(input.query) as { properties?: Record<string, object>; required?: string[] };
    detail.parameters = Object.entries(schema.properties ?? {}).map(([name, property]) => ({
      name,
      in: "query",
      required: schema.required?.includes(name) ?? false,
      schema: property,
    }));
  }
  return detail;
}
