/**
 * Health, no auth, no secrets. `GET /health` (kept for existing clients): store and Redis
 * reachability, 200 when both answer, 503 otherwise. `GET /healthz`: the process runs.
 * `GET /readyz`: the store and Redis answer (migrations ran when the store opened, before the app
 * was built, so an API that answers has them). `GET /version`: package version, git commit, Bun.
 */
import { Elysia } from "elysia";
import type { BuildInfo } from "../../common/build-info.ts";
import { checkReadiness, livenessResponse, readinessResponse } from "../../common/health.ts";
import { routeDoc } from "./route-doc.ts";

export interface HealthProbes {
  store: () => Promise<boolean>;
  redis: () => Promise<boolean>;
}

const publicDoc = (summary: string, returns?: string) =>
  routeDoc({ summary, tags: ["operations"], isPublic: true, ...(returns ? { returns } : {}) });

export function healthRoutes(probes: HealthProbes, build: () => BuildInfo) {
  return new Elysia({ name: "health" })
    .get(
      "/health",
      async ({ set }) => {
        const [store, redis] = await Promise.all([
          probes.store().catch(() => false),
          probes.redis().catch(() => false),
        ]);
        const ok = store && redis;
        set.status = ok ? 200 : 503;
        return { status: ok ? "ok" : "degraded", store: store ? "ok" : "down", redis: redis ? "ok" : "down" };
      },
      { detail: publicDoc("Store and Redis reachability (503 when either is down)") },
    )
    .get("/healthz", () => livenessResponse(), {
      detail: publicDoc("Liveness: the process runs", '{"status":"ok"}'),
    })
    .get(
      "/readyz",
      async () => readinessResponse(await checkReadiness({ store: probes.store, redis: probes.redis })),
      {
        detail: publicDoc(
          "Readiness: the store and Redis answer, each within 1 s (503 naming the one down)",
          '{"status":"ready","checks":{"store":"ok","redis":"ok"}}',
        ),
      },
    )
    .get("/version", () => Response.json(build()), {
      detail: publicDoc("The running build", '{"version","commit" (null when unknown),"bun"}'),
    });
}
