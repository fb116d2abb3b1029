/**
 * The GraphQL-over-HTTP request body `{query, variables?, operationName?}`,
 * checked by hand: it is on every request's path, and the check is small
 * enough to read at a glance. Same error shape as every other body check.
 */
import { BadRequestError, type ErrorDetail, ValidationError } from "../../common/errors.ts";
import type { GraphQLRequest } from "./graphql-service.ts";

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** @throws BadRequestError for a body that is not an object, ValidationError listing every bad member. */
export function parseGraphQLRequest(body: unknown): GraphQLRequest {
  if (!isObject(body)) throw new BadRequestError("the request body must be a JSON object");
  const { query, variables, operationName } = body;
  const problems: ErrorDetail[] = [];
  if (typeof query !== "string" || query.length === 0)
    problems.push({ path: "query", message: "a non-empty string is required" });
  if (variables !== undefined && variables !== null && !isObject(variables))
    problems.push({ path: "variables", message: "must be an object" });
  if (operationName !== undefined && operationName !== null && typeof operationName !== "string") {
    problems.push({ path: "operationName", message: "must be a string" });
  }
  if (problems.length > 0) throw new ValidationError("the request body is invalid", problems);
  return {
    query: query as string,
    variables: (variables as Record<string, unknown> | null | undefined) ?? null,
    operationName: (operationName as string | null | undefined) ?? null,
  };
}
