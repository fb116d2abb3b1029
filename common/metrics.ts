/**
 * Metrics as Prometheus reads them, for both processes: one registry per process, the
 * exposition answer of `GET /metrics` and its optional bearer token. What each process measures
 * is declared beside what it measures (api/http/http-metrics.ts, dispatcher/delivery-metrics.ts, …),
 * each family in base units (`_seconds`), counters ending in `_total`, labels of low cardinality:
 * route templates, codes, outcomes; never a tenant id, a webhook id or a raw path.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { BuildInfo } from "./build-info.ts";
import { UnauthorizedError } from "./errors.ts";

export type { Registry } from "prom-client";

/**
 * A process's registry. With `process` (the processes' own, not the tests'), it also holds the
 * runtime's own families (CPU, memory, event-loop lag, open files: prom-client's defaults) and
 * `build_info`, 1, labelled with the version, commit and Bun version.
 */
export function createMetricsRegistry(process?: { build: BuildInfo }): Registry {
  const registry = new Registry();
  if (process) {
    collectDefaultMetrics({ register: registry });
    new Gauge({
      name: "build_info",
      help: "The running build: its package version, git commit (unknown when not known at build) and Bun version; always 1.",
      labelNames: ["version", "commit", "bun"],
      registers: [registry],
    }).set(
      { version: process.build.version, commit: process.build.commit ?? "unknown", bun: process.build.bun },
      1,
    );
  }
  return registry;
}

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * Checks a `/metrics` request's `Authorization` header against METRICS_TOKEN: anything passes when
 * no token is configured (then the listen address is the protection), else only `Bearer <token>`.
 * Compared as digests in constant time, so neither the token nor its length leaks by timing.
 * @throws UnauthorizedError when a token is configured and the header does not carry it.
 */
export function assertMetricsAccess(token: string | undefined, authorization: string | null): void {
  if (token === undefined) return;
  const given = authorization?.startsWith("Bearer ") ? authorization.slice(7) : "";
  if (!timingSafeEqual(digest(given), digest(token)))
    throw new UnauthorizedError("metrics need Authorization: Bearer <METRICS_TOKEN>");
}

/** The registry's families as Prometheus' text exposition format, with its content type. */
export async function metricsResponse(registry: Registry): Promise<Response> {
  return new Response(await registry.metrics(), { headers: { "content-type": registry.contentType } });
}
