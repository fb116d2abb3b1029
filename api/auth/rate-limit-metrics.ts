/** The rate limiter's family: requests refused by a bucket, by which (token or tenant). */
import { Counter } from "prom-client";
import type { Registry } from "../../common/metrics.ts";
import type { RateLimiter } from "./rate-limiter.ts";

/** `limiter` counting its refusals in `rate_limited_requests_total{scope}` on `registry`. */
export function countRefusals(limiter: RateLimiter, registry: Registry): RateLimiter {
  const refused = new Counter({
    name: "rate_limited_requests_total",
    help: "Requests answered 429 because a rate limit's bucket was empty, by bucket (token or tenant).",
    labelNames: ["scope"],
    registers: [registry],
  });
  return {
    async admit(tenantId, tokenId) {
      const admission = await limiter.admit(tenantId, tokenId);
      if (admission && !admission.allowed) refused.inc({ scope: admission.scope });
      return admission;
    },
  };
}
