/** `/graphql/*`: the tenant's schema as SDL, and GraphQL over HTTP (POST, and GET for queries). */
import { Elysia } from "elysia";
import { BadRequestError } from "../../common/errors.ts";
import { authPlugin } from "../auth/auth-plugin.ts";
import type { AuthService } from "../auth/auth-service.ts";
import { parseGraphQLRequest } from "./graphql-request.ts";
import type { GraphQLService } from "./graphql-service.ts";

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
        const { status, body: answer } = await graphql.execute(principal, parseGraphQLRequest(body));
        set.status = status;
        return answer;
      },
      { auth: true },
    )
    .get(
      "/graphql",
      async ({ principal, query, set }) => {
        const request = parseGraphQLRequest(fromSearchParams(query));
        const { status, body: answer } = await graphql.execute(principal, request, true);
        set.status = status;
        return answer;
      },
      { auth: true },
    );
}
