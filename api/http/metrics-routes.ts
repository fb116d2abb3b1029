/**
 * `GET /metrics`: the process's registry in Prometheus' text format. Open unless METRICS_TOKEN is
 * set (then `Authorization: Bearer <token>`, else 401 unauthorized); never rate-limited, and no
 * tenant's token opens it: it reads no tenant's data, and its labels name none.
 */
import { Elysia } from "elysia";
import { assertMetricsAccess, metricsResponse, type Registry } from "../../common/metrics.ts";
import { routeDoc } from "./route-doc.ts";

export function metricsRoutes(registry: Registry, token: string | undefined) {
  return new Elysia({ name: "metrics" }).get(
    "/metrics",
    ({ request }) => {
      assertMetricsAccess(token, request.headers.get("authorization"));
      return metricsResponse(registry);
    },
    {
      detail: routeDoc({
        summary: "Prometheus metrics (Bearer METRICS_TOKEN when one is set; no tenant token opens it)",
        tags: ["operations"],
        isPublic: true,
        returns: "Prometheus text exposition format",
      }),
    },
  );
}
