/**
 * The HTTP families of the API: every answered request by method, route template and status,
 * with its latency. `route` is the template Elysia matched (`/webhooks/:id`), never the raw path;
 * requests no route took (unknown paths, bodies refused before routing) share `unmatched`.
 */
import { Histogram } from "prom-client";
import type { Registry } from "../../common/metrics.ts";

/** The route label of a request no route took. */
export const UNMATCHED_ROUTE = "unmatched";

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** Observes one answered request. */
export type ObserveRequest = (method: string, route: string, status: number, seconds: number) => void;

/**
 * `http_request_duration_seconds{method, route, status}` on `registry`; its `_count` is the
 * request count. Buckets from 0.5 ms (a read the store answers whole) to 10 s.
 */
export function createHttpMetrics(registry: Registry): ObserveRequest {
  const duration = new Histogram({
    name: "http_request_duration_seconds",
    help: "Time from a request's arrival to its answer's headers, by method, route template and status.",
    labelNames: ["method", "route", "status"],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return (method, route, status, seconds) =>
    duration.observe(
      // A client may send any method: only the known ones become label values.
      { method: METHODS.has(method) ? method : "OTHER", route, status: String(status) },
      seconds,
    );
}
