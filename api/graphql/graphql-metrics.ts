/**
 * The GraphQL families: every executed request by operation type and error code, with its
 * latency. Measured around the service, so the route (and whatever transport reaches it) stays as
 * it is; the codes are the answer's own `extensions.code`s, a closed set (SPEC.md §2).
 */
import { Counter, Histogram } from "prom-client";
import { isAppError } from "../../common/errors.ts";
import type { Registry } from "../../common/metrics.ts";
import type { GraphQLAnswer, GraphQLService } from "./graphql-service.ts";

/** The code of an operation answered without errors. */
const NO_ERROR = "none";
// What a code label may be: ours are upper-case words; anything else (a code a library set) is OTHER.
const CODE = /^[A-Z][A-Z_]{0,39}$/;

/** The code an answer is counted under: its first error's, or `none`. */
function answerCode(body: GraphQLAnswer["body"]): string {
  if (typeof body === "string") return NO_ERROR;
  const errors = body.errors as { extensions?: { code?: unknown } }[] | undefined;
  const code = errors?.[0]?.extensions?.code;
  if (code === undefined) return NO_ERROR;
  return typeof code === "string" && CODE.test(code) ? code : "OTHER";
}

/**
 * `service` with `graphql_operations_total{type, code}` (one per request: `type` query, mutation,
 * subscription, or unknown when none was chosen; `code` its first error's, `none` without) and
 * `graphql_operation_duration_seconds{type}` on `registry`. A request that throws (a tenant gone, a
 * bad body) is counted under its error's code.
 */
export function instrumentGraphQL(service: GraphQLService, registry: Registry): GraphQLService {
  const operations = new Counter({
    name: "graphql_operations_total",
    help: "GraphQL requests executed, by operation type and the code of their first error (none: no error).",
    labelNames: ["type", "code"],
    registers: [registry],
  });
  const duration = new Histogram({
    name: "graphql_operation_duration_seconds",
    help: "Time to execute a GraphQL request (parse, validate, run), by operation type.",
    labelNames: ["type"],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return {
    ...service,
    async execute(principal, request, viaGet) {
      const started = performance.now();
      let answer: GraphQLAnswer;
      try {
        answer = await service.execute(principal, request, viaGet);
      } catch (error) {
        const code = isAppError(error) ? error.code.toUpperCase() : "INTERNAL";
        operations.inc({ type: "unknown", code });
        duration.observe({ type: "unknown" }, (performance.now() - started) / 1000);
        throw error;
      }
      const type = answer.operation ?? "unknown";
      operations.inc({ type, code: answerCode(answer.body) });
      duration.observe({ type }, (performance.now() - started) / 1000);
      return answer;
    },
  };
}
