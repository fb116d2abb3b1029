/** `GET /health`: store and Redis reachability, no auth, no secrets. 200 when both answer, 503 otherwise. */
import { Elysia } from "elysia";
import { routeDoc } from "./route-doc.ts";

export interface HealthProbes {
  store: () => Promise<boolean>;
  redis: () => Promise<boolean>;
}

export function healthRoutes(probes: HealthProbes) {
  const detail = routeDoc({
    summary: "Store and Redis reachability (503 when either is down)",
    tags: ["operations"],
    isPublic: true,
  });
  return new Elysia({ name: "health" }).get(
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
    { detail },
  );
}
