/**
 * GraphQL-over-HTTP bodies: one request `{query, variables?, operationName?, extensions?}` or a
 * batch of them (a JSON array, as Apollo's BatchHttpLink sends), checked by hand: it is on every
 * request's path, and the check is small enough to read at a glance. Same error shape as every
 * other body check. `query` may be left out when `extensions.persistedQuery` stands for it.
 */
import {
  BadRequestError,
  type ErrorDetail,
  LimitExceededError,
  ValidationError,
} from "../../common/errors.ts";

/** A request as it came: its query text, or null when a persisted query's hash stands for it. */
export interface HttpGraphQLRequest {
  query: string | null;
  variables: Record<string, unknown> | null;
  operationName: string | null;
  extensions: Record<string, unknown> | null;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const isAbsent = (value: unknown) => value === undefined || value === null;

/** The members of one request, with problems named under `at` (`[2].` inside a batch). */
function readRequest(body: Record<string, unknown>, at: string, problems: ErrorDetail[]): HttpGraphQLRequest {
  const { query, variables, operationName, extensions } = body;
  if (!isAbsent(extensions) && !isObject(extensions))
    problems.push({ path: `${at}extensions`, message: "must be an object" });
  const persisted = isObject(extensions) && extensions.persistedQuery !== undefined;
  const queryGiven = typeof query === "string" && query.length > 0;
  if (!queryGiven && !(persisted && isAbsent(query)))
    problems.push({ path: `${at}query`, message: "a non-empty string is required" });
  if (!isAbsent(variables) && !isObject(variables))
    problems.push({ path: `${at}variables`, message: "must be an object" });
  if (!isAbsent(operationName) && typeof operationName !== "string")
    problems.push({ path: `${at}operationName`, message: "must be a string" });
  return {
    query: queryGiven ? query : null,
    variables: isObject(variables) ? variables : null,
    operationName: typeof operationName === "string" ? operationName : null,
    extensions: isObject(extensions) ? extensions : null,
  };
}

/** @throws BadRequestError for a body that is not an object, ValidationError listing every bad member. */
export function parseGraphQLRequest(body: unknown): HttpGraphQLRequest {
  if (!isObject(body)) throw new BadRequestError("the request body must be a JSON object");
  const problems: ErrorDetail[] = [];
  const request = readRequest(body, "", problems);
  if (problems.length > 0) throw new ValidationError("the request body is invalid", problems);
  return request;
}

/**
 * A POST body: one request, or a batch of 1 to `maxBatch` requests, each checked like one.
 * @throws BadRequestError (not an object or array, an empty batch), LimitExceededError (a batch
 * over `maxBatch`), ValidationError listing every bad member of every request.
 */
export function parseGraphQLBody(
  body: unknown,
  maxBatch: number,
): { batch: boolean; requests: HttpGraphQLRequest[] } {
  if (!Array.isArray(body)) return { batch: false, requests: [parseGraphQLRequest(body)] };
  if (body.length === 0) throw new BadRequestError("the batch is empty");
  if (body.length > maxBatch) {
    throw new LimitExceededError(
      `a batch may hold at most ${maxBatch} operations (GRAPHQL_MAX_BATCH); this one holds ${body.length}`,
    );
  }
  const problems: ErrorDetail[] = [];
  const requests = body.map((element, index) => {
    if (isObject(element)) return readRequest(element, `[${index}].`, problems);
    problems.push({ path: `[${index}]`, message: "must be a JSON object" });
    return { query: null, variables: null, operationName: null, extensions: null };
  });
  if (problems.length > 0) throw new ValidationError("the request body is invalid", problems);
  return { batch: true, requests };
}
