/**
 * A GraphQL request of one tenant: its schema from the catalogue, the document
 * parsed and validated (once per schema version and query text), then executed. Request-level failures answer with
 * GRAPHQL_PARSE_FAILED / GRAPHQL_VALIDATION_FAILED and never execute. A query
 * the store reads whole, and a mutation, are first tried with the catalogue
 * last read, its version checked by the read or the write itself
 * (`runUnchecked`).
 */
import {
  type DocumentNode,
  type ExecutionResult,
  execute,
  type GraphQLError,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type OperationTypeNode,
  parse,
  validate,
} from "graphql";
import { compileQuery, isCompiledQuery } from "graphql-jit";
import { CatalogueChangedError, LimitExceededError, UnavailableError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import { currentRequestId } from "../../common/request-context.ts";
import type { Principal } from "../auth/principal.ts";
import type { CatalogueService } from "../catalogue/catalogue-service.ts";
import type { Catalogue } from "../model/catalogue.ts";
import { type CachedDocument, createDocumentCache } from "./document-cache.ts";

import { checkDocumentLimits, type DocumentLimits, hasFilterVariables } from "./document-limits.ts";
import { MAX_DOCUMENT_NESTING, nestsDeeperThan } from "./document-nesting.ts";
import { compiledBytes } from "./document-size.ts";
import { formatGraphQLError, isUnexpected, requestError } from "./format-error.ts";
import { createRequestLoaders, type GraphQLContext } from "./graphql-context.ts";
import type { ReadAnswers } from "./queries/read-answers.ts";
import type { SchemaCache, TenantSchema } from "./schema/schema-cache.ts";

export interface GraphQLRequest {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

export type GraphQLService = ReturnType<typeof createGraphQLService>;

/**
 * What a request is answered with: the HTTP status (200 unless GET carried a mutation) and the
 * body, an object or, when the store read the whole answer, its JSON text. `requestError` marks a
 * request that never executed (parse, validation, variables): GraphQL over HTTP answers those 400
 * to a client that accepts application/graphql-response+json.
 */
export interface GraphQLAnswer {
  status: number;
  body: Record<string, unknown> | string;
  requestError?: boolean;
  /** The type of the operation answered; absent when the request failed before one was chosen. */
  operation?: OperationTypeNode;
}

export function createGraphQLService(
  catalogues: CatalogueService,
  schemas: SchemaCache,
  limits: DocumentLimits,
  log: Logger,
  {
    documentCacheBytes = 16 * 1024 * 1024,
    jit = true,
    reads = null,
  }: {
    /** The budget of the document cache, in estimated bytes (document-size.ts). */
    documentCacheBytes?: number;
    /** Executes with graphql-jit (else graphql-js). */
    jit?: boolean;
    /** Reads whole query answers in the store where it can (else every field is resolved). */
    reads?: ReadAnswers | null;
  } = {},
) {
  const documents = createDocumentCache(documentCacheBytes);
  const schemaOf = async (tenantId: string): Promise<TenantSchema> =>
    schemas.get(await catalogues.get(tenantId));

  /** The request's document, parsed and validated (from the cache when seen before), or the errors to answer. */
  function prepare(
    tenantId: string,
    tenantSchema: TenantSchema,
    query: string,
  ): CachedDocument | { failure: Record<string, unknown> } {
    const cached = documents.get(tenantId, tenantSchema.version, query);
    if (cached) return cached;
    if (nestsDeeperThan(query))
      return {
        failure: requestError(
          "GRAPHQL_PARSE_FAILED",
          `Syntax Error: the document nests brackets more than ${MAX_DOCUMENT_NESTING} levels deep.`,
        ),
      };
    let document: DocumentNode;
    try {
      document = parse(query, { maxTokens: 20_000 });
    } catch (error) {
      const syntax = error as GraphQLError;
      return {
        failure: requestError("GRAPHQL_PARSE_FAILED", syntax.message, { locations: syntax.locations }),
      };
    }
    // Limits first: their check is linear in the text, and a document over them must reach nothing costlier.
    for (const definition of document.definitions) {
      if (definition.kind !== "OperationDefinition") continue;
      const breach = checkDocumentLimits(tenantSchema.schema, document, definition, limits);
      if (breach) return { failure: requestError("LIMIT_EXCEEDED", breach) };
    }
    const problems = validate(tenantSchema.schema, document);
    if (problems.length > 0) {
      const errors = problems.map((problem) => ({
        ...formatGraphQLError(problem, log),
        extensions: { code: "GRAPHQL_VALIDATION_FAILED" },
      }));
      return { failure: { errors } };
    }
    return documents.add(tenantId, tenantSchema.version, query, document);
  }

  /** Documents with a `filter` given as a variable: priced again with each request's values. */
  const filterVariables = new WeakMap<DocumentNode, boolean>();

  /**
   * The limit a request breaks with its variables (a filter's sub-queries are priced as scans, and a
   * filter given as a variable is only known now), as a message; null when it keeps them all, or
   * when its document has no filter given as a variable (checked once, when it was prepared).
   */
  function variablesBreach(
    schema: GraphQLSchema,
    prepared: CachedDocument,
    operation: OperationDefinitionNode,
    request: GraphQLRequest,
  ): string | null {
    let priced = filterVariables.get(prepared.document);
    if (priced === undefined) {
      priced = hasFilterVariables(prepared.document);
      filterVariables.set(prepared.document, priced);
    }
    return priced
      ? checkDocumentLimits(schema, prepared.document, operation, limits, request.variables ?? {})
      : null;
  }

  /**
   * The query operation compiled by graphql-jit (once per kept document), or null to run it with
   * graphql-js: when JIT is off, for a document the cache does not keep (compiling costs several
   * runs), for a mutation (graphql-jit ran them no faster: the work is in the resolvers), or for an
   * operation graphql-jit cannot compile.
   */
  function compiledOperation(
    prepared: CachedDocument,
    tenantSchema: TenantSchema,
    operation: OperationDefinitionNode,
  ) {
    if (!jit || !prepared.kept || operation.operation !== "query") return null;
    const name = operation.name?.value ?? "";
    if (!prepared.compiled.has(name)) {
      const compiled = compileQuery(tenantSchema.schema, prepared.document, operation.name?.value);
      if (isCompiledQuery(compiled)) {
        prepared.compiled.set(name, compiled);
        prepared.account(compiledBytes(prepared.document, operation));
      } else prepared.compiled.set(name, null);
    }
    return prepared.compiled.get(name) ?? null;
  }

  /** The operation the request names, or its document's only one. */
  const operationOf = (prepared: CachedDocument, request: GraphQLRequest) =>
    request.operationName
      ? prepared.operations.get(request.operationName)
      : prepared.operations.size === 1
        ? prepared.operations.values().next().value
        : undefined;

  /**
   * `reads.data` (null without whole reads), or, when the store refused the read for its own
   * bounds (a statement past its time limit, the tenant's share of the pool busy), the answer
   * saying so: the resolvers would meet the same bound after as long.
   */
  async function readWhole(
    operation: OperationDefinitionNode,
    ...args: Parameters<ReadAnswers["data"]>
  ): Promise<string | GraphQLAnswer | null> {
    try {
      return (await reads?.data(...args)) ?? null;
    } catch (error) {
      if (!(error instanceof LimitExceededError || error instanceof UnavailableError)) throw error;
      const body = { ...requestError(error.code.toUpperCase(), error.message), data: null };
      return { status: 200, body, operation: operation.operation };
    }
  }

  /**
   * Runs a valid operation with `catalogue` (the one `tenantSchema` was built from): a query the
   * store reads whole, else the resolvers. `catalogueMoved`: the answer has errors that another
   * version of the catalogue explains (a write refused for it, storage gone under a resolver).
   */
  async function run(
    principal: Principal,
    catalogue: Catalogue,
    tenantSchema: TenantSchema,
    prepared: CachedDocument,
    operation: OperationDefinitionNode,
    request: GraphQLRequest,
  ): Promise<{ answer: GraphQLAnswer; catalogueMoved: boolean }> {
    const data = await readWhole(
      operation,
      principal.tenantId,
      catalogue,
      tenantSchema.schema,
      prepared,
      operation,
      request.variables,
    );
    if (typeof data === "object" && data !== null) return { answer: data, catalogueMoved: false };
    if (data)
      return {
        answer: { status: 200, body: `{"data":${data}}`, operation: operation.operation },
        catalogueMoved: false,
      };
    const context: GraphQLContext = {
      principal,
      loaders: createRequestLoaders(),
      requestId: currentRequestId(),
    };
    const compiled = compiledOperation(prepared, tenantSchema, operation);
    const result = (
      compiled
        ? await compiled.query(undefined, context, request.variables ?? {})
        : await execute({
            schema: tenantSchema.schema,
            document: prepared.document,
            variableValues: request.variables ?? undefined,
            operationName: operation.name?.value,
            contextValue: context,
          })
    ) as ExecutionResult;

    const body: Record<string, unknown> = {};
    let catalogueMoved = false;
    if (result.errors) {
      // A resolver that failed unexpectedly may have met storage another request changed meanwhile.
      const unexpectedMoved =
        result.errors.some(isUnexpected) &&
        (await catalogues.get(principal.tenantId)).version !== catalogue.version;
      catalogueMoved =
        unexpectedMoved ||
        result.errors.some((error) => error.originalError instanceof CatalogueChangedError);
      body.errors = result.errors.map((error) => formatGraphQLError(error, log, unexpectedMoved));
    }
    // A mutation is all or nothing: when it failed, nothing it reported holds.
    body.data = operation.operation === "mutation" && result.errors ? null : (result.data ?? null);
    // No data at all: the variables did not coerce, so nothing ran.
    const requestError = result.data === undefined;
    return { answer: { status: 200, body, requestError, operation: operation.operation }, catalogueMoved };
  }

  /**
   * A request answered with the catalogue this process last read, unchecked, where the store checks
   * the version itself: a query the store reads whole (its statement answers only at that version:
   * no round trip of its own), or a mutation (its unit of work checks the version with its writes and
   * writes nothing at another). Only for a document kept already (parsed and validated against that
   * catalogue). Null for anything else — a document not kept, another version, a read the store does
   * not answer whole, a write refused for another version — which the caller then answers with the
   * catalogue checked, as if this had not been tried.
   */
  async function runUnchecked(
    principal: Principal,
    catalogue: Catalogue,
    request: GraphQLRequest,
    viaGet: boolean,
  ): Promise<GraphQLAnswer | null> {
    const prepared = documents.kept(principal.tenantId, catalogue.version, request.query);
    const operation = prepared && operationOf(prepared, request);
    if (!prepared || !operation) return null;
    const breach = variablesBreach(schemas.get(catalogue).schema, prepared, operation, request);
    if (breach) {
      const body = requestError("LIMIT_EXCEEDED", breach);
      return { status: 200, body, requestError: true, operation: operation.operation };
    }
    let answer: GraphQLAnswer | null = null;
    if (operation.operation === "query" && reads) {
      const variables = request.variables;
      const schema = schemas.get(catalogue).schema;
      const data = await readWhole(
        operation,
        principal.tenantId,
        catalogue,
        schema,
        prepared,
        operation,
        variables,
        true,
      );
      if (typeof data === "string")
        answer = { status: 200, body: `{"data":${data}}`, operation: operation.operation };
      else if (data !== null) answer = data;
    } else if (operation.operation === "mutation" && !viaGet) {
      const ran = await run(principal, catalogue, schemas.get(catalogue), prepared, operation, request);
      // A mutation that failed wrote nothing. Its errors may be the kept catalogue's own (variables
      // of an input type changed since, which fail before any write checks the version): it is
      // answered as is only while that catalogue is still the current one.
      const failed = typeof ran.answer.body === "object" && "errors" in ran.answer.body;
      const stillCurrent = async () =>
        (await catalogues.get(principal.tenantId)).version === catalogue.version;
      if (!ran.catalogueMoved && (!failed || (await stillCurrent()))) answer = ran.answer;
    }
    if (answer) documents.countHit();
    return answer;
  }

  return {
    schemaOf,

    /** How many documents the cache keeps, their estimated bytes, its hits and misses. */
    documentCacheUsage: () => documents.usage(),

    /** Runs a request; `viaGet` requests may only read (a mutation answers 405). */
    async execute(principal: Principal, request: GraphQLRequest, viaGet = false): Promise<GraphQLAnswer> {
      const answer = (
        body: Record<string, unknown>,
        status = 200,
        operation?: OperationTypeNode,
      ): GraphQLAnswer => ({
        status,
        body,
        requestError: true,
        operation,
      });
      const lastRead = catalogues.lastRead(principal.tenantId);
      const unchecked = lastRead && (await runUnchecked(principal, lastRead, request, viaGet));
      if (unchecked) return unchecked;
      const catalogue = await catalogues.get(principal.tenantId);
      const tenantSchema = schemas.get(catalogue);
      const prepared = prepare(principal.tenantId, tenantSchema, request.query);
      if ("failure" in prepared) return answer(prepared.failure);
      const operation = operationOf(prepared, request);
      if (!operation) {
        return answer(
          requestError(
            "GRAPHQL_VALIDATION_FAILED",
            request.operationName
              ? `no operation named '${request.operationName}' in the document`
              : "the document has several operations: name one in operationName",
          ),
        );
      }
      if (operation.operation === "subscription") {
        return answer(
          requestError(
            "GRAPHQL_VALIDATION_FAILED",
            "subscriptions are delivered by webhooks (register this one with POST /webhooks) or live over WebSocket at /graphql/subscriptions",
          ),
          200,
          operation.operation,
        );
      }
      if (viaGet && operation.operation === "mutation") {
        return answer(
          requestError("GRAPHQL_VALIDATION_FAILED", "mutations are only accepted with POST"),
          405,
          operation.operation,
        );
      }
      const breach = variablesBreach(tenantSchema.schema, prepared, operation, request);
      if (breach) return answer(requestError("LIMIT_EXCEEDED", breach), 200, operation.operation);
      return (await run(principal, catalogue, tenantSchema, prepared, operation, request)).answer;
    },
  };
}
