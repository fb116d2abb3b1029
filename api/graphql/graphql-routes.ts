/**
 * `/graphql/*`: the tenant's schema as SDL, and GraphQL over HTTP: POST (one request or a batch),
 * GET for queries, automatic persisted queries on both, the answer's media type from Accept.
 */
import { Elysia } from "elysia";
import { z } from "zod";
import { BadRequestError, NotFoundError } from "../../common/errors.ts";
import { authPlugin } from "../auth/auth-plugin.ts";
import type { AuthService } from "../auth/auth-service.ts";
import type { Principal } from "../auth/principal.ts";
import { rateLimitHeaders } from "../auth/rate-limit-headers.ts";
import { assertAdmitted } from "../auth/rate-limiter.ts";
import { routeDoc } from "../http/route-doc.ts";
import { requestError } from "./format-error.ts";
import { GRAPHQL_RESPONSE_JSON, type GraphQLMediaType, negotiateMediaType } from "./graphql-media.ts";
import { type HttpGraphQLRequest, parseGraphQLBody, parseGraphQLRequest } from "./graphql-request.ts";
import type { GraphQLAnswer, GraphQLService } from "./graphql-service.ts";
import { type PersistedQueryStore, resolveQuery } from "./persisted-queries.ts";
import { OWN_SCALAR_SPECS } from "./schema/scalar-specs.ts";

export interface GraphQLRouteOptions {
  /** Automatic persisted queries, per tenant. */
  persisted: PersistedQueryStore;
  /** Most operations in one batch. */
  maxBatch: number;
}

/** A GET parameter holding JSON text (`variables`, `extensions`), decoded. */
function jsonParameter(name: string, text: string | undefined): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new BadRequestError(`the ${name} parameter is not valid JSON`);
  }
}

/** GET parameters → the request shape: `variables` and `extensions` are JSON text there. */
function fromSearchParams(query: Record<string, string | undefined>): Record<string, unknown> {
  return {
    query: query.query,
    variables: jsonParameter("variables", query.variables),
    operationName: query.operationName ?? null,
    extensions: jsonParameter("extensions", query.extensions),
  };
}

const PERSISTED_QUERY_NOT_FOUND: GraphQLAnswer = {
  status: 200,
  // Apollo's links look for this message or code, then send the query text.
  body: requestError("PERSISTED_QUERY_NOT_FOUND", "PersistedQueryNotFound"),
  requestError: true,
};

/**
 * An answer's status and JSON text for the negotiated media type: with graphql-response+json a
 * request error is 400 and has no `data`; with application/json it keeps 200 (and its shape).
 */
function render(answer: GraphQLAnswer, media: GraphQLMediaType): { status: number; text: string } {
  if (typeof answer.body === "string") return { status: answer.status, text: answer.body };
  if (media !== GRAPHQL_RESPONSE_JSON || !answer.requestError) {
    return { status: answer.status, text: JSON.stringify(answer.body) };
  }
  const { data: _omitted, ...body } = answer.body;
  return { status: answer.status === 200 ? 400 : answer.status, text: JSON.stringify(body) };
}

function respond(status: number, text: string, media: GraphQLMediaType): Response {
  const headers: Record<string, string> = { "content-type": `${media}; charset=utf-8` };
  // GET carried a mutation (graphql-service.ts): only POST may.
  if (status === 405) headers.allow = "POST";
  return new Response(text, { status, headers });
}

/**
 * The request's shape for the API's documentation only: the body is checked by hand
 * (graphql-request.ts), on every request's path.
 */
const RequestDoc = z.object({
  query: z
    .string()
    .optional()
    .describe("The document; may be left out when extensions.persistedQuery names it"),
  variables: z.record(z.string(), z.unknown()).nullable().optional(),
  operationName: z.string().nullable().optional(),
  extensions: z.record(z.string(), z.unknown()).nullable().optional(),
});
const GetRequestDoc = z.object({
  query: z.string().optional(),
  variables: z.string().optional().describe("JSON text"),
  operationName: z.string().optional(),
  extensions: z.string().optional().describe("JSON text"),
});

export function graphqlRoutes(auth: AuthService, graphql: GraphQLService, options: GraphQLRouteOptions) {
  const doc = (summary: string, more: Omit<Parameters<typeof routeDoc>[0], "summary" | "tags"> = {}) =>
    routeDoc({ summary, tags: ["graphql"], ...more });
  /** Runs requests in order; every query is resolved first, so a bad one in a batch runs none. */
  async function run(principal: Principal, requests: HttpGraphQLRequest[], viaGet: boolean) {
    const resolved = requests.map((request, index) =>
      resolveQuery(options.persisted, principal.tenantId, request, requests.length > 1 ? `[${index}].` : ""),
    );
    const answers: GraphQLAnswer[] = [];
    for (const [index, request] of requests.entries()) {
      const query = resolved[index];
      if (!query || "notFound" in query) {
        answers.push(PERSISTED_QUERY_NOT_FOUND);
        continue;
      }
      const { variables, operationName } = request;
      answers.push(
        await graphql.execute(principal, { query: query.query, variables, operationName }, viaGet),
      );
    }
    return answers;
  }

  /**
   * A batch counts as one request per operation against the rate limits: the auth plugin took one,
   * this takes the rest (each refusal is a 429 for the whole batch; what was taken stays taken).
   */
  async function admitBatch(principal: Principal, size: number, headers: Record<string, unknown>) {
    for (let taken = 1; taken < size; taken++) {
      const admission = await auth.admit(principal);
      Object.assign(headers, rateLimitHeaders(admission));
      assertAdmitted(admission);
    }
  }

  return (
    new Elysia({ name: "graphql-routes", prefix: "/graphql" })
      .use(authPlugin(auth))
      // Public: the specifications `@specifiedBy` points at, the same for every tenant.
      .get(
        "/scalars/:name",
        ({ params, set }) => {
          const text = Object.hasOwn(OWN_SCALAR_SPECS, params.name)
            ? OWN_SCALAR_SPECS[params.name]
            : undefined;
          if (text === undefined) throw new NotFoundError(`no scalar specification named ${params.name}`);
          set.headers["content-type"] = "text/markdown; charset=utf-8";
          return text;
        },
        { detail: doc("A custom scalar's specification (Markdown)", { isPublic: true }) },
      )
      .get(
        "/schema",
        async ({ principal, request, set }) => {
          const { text, etag } = (await graphql.schemaOf(principal.tenantId)).sdl();
          set.headers.etag = etag;
          if (request.headers.get("if-none-match") === etag) {
            set.status = 304;
            return "";
          }
          set.headers["content-type"] = "text/plain; charset=utf-8";
          return text;
        },
        { auth: true, detail: doc("The tenant's GraphQL schema as SDL, with an ETag") },
      )
      .post(
        "/graphql",
        async ({ principal, body, request, set }) => {
          const media = negotiateMediaType(request.headers.get("accept"));
          const { batch, requests } = parseGraphQLBody(body, options.maxBatch);
          if (!batch) {
            const [answer] = await run(principal, requests, false);
            const { status, text } = render(answer as GraphQLAnswer, media);
            return respond(status, text, media);
          }
          await admitBatch(principal, requests.length, set.headers);
          const answers = await run(principal, requests, false);
          // One answer per operation, in order; the batch itself was understood, so 200.
          return respond(200, `[${answers.map((answer) => render(answer, media).text).join(",")}]`, media);
        },
        {
          auth: true,
          detail: doc("Run a GraphQL request, or a batch of them (a JSON array)", {
            body: z.union([RequestDoc, z.array(RequestDoc).min(1).max(options.maxBatch)]),
          }),
        },
      )
      .get(
        "/graphql",
        async ({ principal, query, request }) => {
          const media = negotiateMediaType(request.headers.get("accept"));
          const [answer] = await run(principal, [parseGraphQLRequest(fromSearchParams(query))], true);
          const { status, text } = render(answer as GraphQLAnswer, media);
          return respond(status, text, media);
        },
        { auth: true, detail: doc("Run a GraphQL query (no mutations)", { query: GetRequestDoc }) },
      )
  );
}
