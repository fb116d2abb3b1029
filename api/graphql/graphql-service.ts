/**
 * A GraphQL request of one tenant: its schema from the catalogue, the document
 * parsed and validated, then executed. Request-level failures answer with
 * GRAPHQL_PARSE_FAILED / GRAPHQL_VALIDATION_FAILED and never execute.
 */
import {
  type DocumentNode,
  type ExecutionResult,
  execute,
  type GraphQLError,
  getOperationAST,
  parse,
  validate,
} from "graphql";
import type { Logger } from "../../common/log.ts";
import type { Principal } from "../auth/principal.ts";
import type { CatalogueService } from "../catalogue/catalogue-service.ts";
import { formatGraphQLError, requestError } from "./format-error.ts";
import type { GraphQLContext } from "./graphql-context.ts";
import type { SchemaCache, TenantSchema } from "./schema/schema-cache.ts";

export interface GraphQLRequest {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

export type GraphQLService = ReturnType<typeof createGraphQLService>;

export function createGraphQLService(catalogues: CatalogueService, schemas: SchemaCache, log: Logger) {
  const schemaOf = async (tenantId: string): Promise<TenantSchema> =>
    schemas.get(await catalogues.get(tenantId));

  return {
    schemaOf,

    async execute(principal: Principal, request: GraphQLRequest): Promise<Record<string, unknown>> {
      const { schema } = await schemaOf(principal.tenantId);
      let document: DocumentNode;
      try {
        document = parse(request.query, { maxTokens: 20_000 });
      } catch (error) {
        const syntax = error as GraphQLError;
        return requestError("GRAPHQL_PARSE_FAILED", syntax.message, { locations: syntax.locations });
      }
      const problems = validate(schema, document);
      if (problems.length > 0) {
        return {
          errors: problems.map((problem) => ({
            ...formatGraphQLError(problem, log),
            extensions: { code: "GRAPHQL_VALIDATION_FAILED" },
          })),
        };
      }
      const operation = getOperationAST(document, request.operationName ?? undefined);
      if (operation?.operation === "subscription") {
        return requestError(
          "GRAPHQL_VALIDATION_FAILED",
          "subscriptions are delivered by webhooks: register this one with POST /webhooks",
        );
      }
      const result = (await execute({
        schema,
        document,
        variableValues: request.variables ?? undefined,
        operationName: request.operationName ?? undefined,
        contextValue: { principal } satisfies GraphQLContext,
      })) as ExecutionResult;
      const body: Record<string, unknown> = {};
      if (result.errors) body.errors = result.errors.map((error) => formatGraphQLError(error, log));
      // A mutation is all or nothing: when it failed, nothing it reported holds.
      body.data = operation?.operation === "mutation" && result.errors ? null : (result.data ?? null);
      return body;
    },
  };
}
