/**
 * The dispatcher's operations listener, as a fetch handler (main.ts serves it on DISPATCHER_PORT):
 * `GET /metrics` (the process's registry; METRICS_TOKEN applies as on the API), `GET /healthz`
 * (the process runs), `GET /readyz` (its workers take jobs and Redis answers; 503 while starting
 * and once shutdown began, so nothing waits on a dispatcher that is leaving). Nothing else.
 */
import { NotFoundError, type UnauthorizedError } from "../common/errors.ts";
import {
  checkReadiness,
  livenessResponse,
  type ReadinessChecks,
  readinessResponse,
} from "../common/health.ts";
import { assertMetricsAccess, metricsResponse, type Registry } from "../common/metrics.ts";

export interface OpsServerDeps {
  metrics: Registry;
  /** METRICS_TOKEN; undefined: `/metrics` is open. */
  metricsToken: string | undefined;
  /** What `/readyz` asks, by name. */
  readiness: ReadinessChecks;
}

// The API's statuses for the two codes this listener answers with (api/http/error-response.ts).
const STATUS = { not_found: 404, unauthorized: 401 } as const;

/** An error as the API shapes it: `{errorType, message}` with the code's status. */
const errorAnswer = (error: NotFoundError | UnauthorizedError) =>
  Response.json({ errorType: error.code, message: error.message }, { status: STATUS[error.code] });

/** The listener's handler: a request in, its answer out (never throws). */
export function createOpsHandler(deps: OpsServerDeps): (request: Request) => Promise<Response> {
  return async (request) => {
    const { pathname } = new URL(request.url);
    if (request.method !== "GET" && request.method !== "HEAD")
      return errorAnswer(new NotFoundError("no such endpoint"));
    switch (pathname) {
      case "/healthz":
        return livenessResponse();
      case "/readyz":
        return readinessResponse(await checkReadiness(deps.readiness));
      case "/metrics":
        try {
          assertMetricsAccess(deps.metricsToken, request.headers.get("authorization"));
        } catch (error) {
          return errorAnswer(error as UnauthorizedError);
        }
        return metricsResponse(deps.metrics);
      default:
        return errorAnswer(new NotFoundError("no such endpoint"));
    }
  };
}
