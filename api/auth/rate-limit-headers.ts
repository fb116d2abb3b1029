/**
 * A rate admission as response headers (SPEC.md §9): the budget left in the
 * bucket nearer to empty, in the `RateLimit-*` fields of the IETF draft
 * (draft-ietf-httpapi-ratelimit-headers, delta-seconds). `Retry-After` on a
 * refusal comes from the error itself (http/error-response.ts).
 */
import type { RateAdmission } from "./rate-limiter.ts";

/** `RateLimit-Limit` (the bucket's size), `-Remaining` (requests left now), `-Reset` (seconds until full). */
export function rateLimitHeaders(admission: RateAdmission | null): Record<string, string> {
  if (!admission) return {};
  return {
    "ratelimit-limit": String(admission.limit),
    "ratelimit-remaining": String(admission.remaining),
    "ratelimit-reset": String(admission.resetSeconds),
  };
}
