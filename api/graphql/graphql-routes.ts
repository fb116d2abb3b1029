/** `/graphql/*`: the tenant's schema as SDL, and GraphQL over HTTP (POST, and GET for queries). */
import { Elysia } from "elysia";
import { BadRequestError } from "../../common/errors.ts";
import { authPlugin } from "../auth/auth-plugin.ts";
import type { AuthService } from "../auth/auth-service.ts";
import { parseGraphQLRequest } from "./graphql-request.ts";
import type { GraphQLAnswer, GraphQLService } from "./graphql-service.ts";

/** GET parameters → the request shape: `variables` is JSON text there. */
function fromSearchParams(query: Record<string, string | undefined>): Record<string, unknown> {
  let variables: unknown = null;
  if (query.variables) {
    try {
      variables = JSON.parse(query.variables);
    } catch {
      throw new BadRequestError("the variables parameter is not valid JSON");
    }
  }
  return { query: query.query, variables, operationName: query.operationName ?? null };
}

/** An answer's body as the route returns it: JSON text the store read whole goes out as it is. */
function sent({ status, body }: GraphQLAnswer, set: { status?: number | string }) {
  if (typeof body === "string") return new Response(body, { status, headers: JSON_TEXT });
  set.status = status;
  return body;
}
const JSON_TEXT = { "content-type": "application/json;charset=utf-8" };

export function graphqlRoutes(auth: AuthService, graphql: GraphQLService) {
  return new Elysia({ name: "graphql-routes", prefix: "/graphql" })
    .use(authPlugin(auth))
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
      { auth: true },
    )
    .post(
      "/graphql",
      async ({ principal, body, set }) => {
        return sent(await graphql.execute(principal, parseGraphQLRequest(body)), set);
      },
      { auth: true },
    )
    .get(
      "/graphql",
      async ({ principal, query, set }) => {
        const request = parseGraphQLRequest(fromSearchParams(query));
        return sent(await graphql.execute(principal, request, true), set);
      },
      { auth: true },
    );
}
