/**
 * Per-token and per-tenant request rates: what the two token buckets said
 * about a request in, one admission (or a RateLimitedError) out. The buckets
 * live in Redis (redis-rate-limiter.ts) so they hold across API processes;
 * everything here is pure.
 */
import { RateLimitedError } from "../../common/errors.ts";

/** One token bucket: it holds up to `burst` requests and refills at `perSecond`; a rate of 0 turns it off. */
export interface BucketRule {
  perSecond: number;
  burst: number;
}

export interface RateLimitRules {
  token: BucketRule;
  tenant: BucketRule;
}

/** What one bucket said about a request: as it stands after the request when admitted, as it stood when refused. */
export interface BucketReading {
  /** Whole requests the bucket would still admit now. */
  remaining: number;
  /** ms until the bucket is full again. */
  fullInMs: number;
  /** ms until the bucket admits one request, when it refused this one; 0 when it had room. */
  retryInMs: number;
}

/** The two buckets' readings for one request (null for a bucket that is off). */
export type BucketReadings = { token: BucketReading | null; tenant: BucketReading | null };

export type RateScope = "token" | "tenant";

/** One request's answer, describing one bucket: the one that refused it, else the one nearer to empty. */
export interface RateAdmission {
  allowed: boolean;
  scope: RateScope;
  /** The described bucket's size (`RateLimit-Limit`) and rate. */
  limit: number;
  perSecond: number;
  /** Requests it still admits now (`RateLimit-Remaining`). */
  remaining: number;
  /** Seconds until it is full again (`RateLimit-Reset`). */
  resetSeconds: number;
  /** Seconds to wait before retrying (`Retry-After`), ≥ 1 when refused; 0 when allowed. */
  retryAfterSeconds: number;
}

/** The port the auth plugin asks once per authenticated request. */
export interface RateLimiter {
  /**
   * Takes one request from the token's and the tenant's buckets, or from neither when either is
   * empty. Null when no limit applies: both are off, or the buckets cannot be read (fail open).
   */
  admit(tenantId: string, tokenId: string): Promise<RateAdmission | null>;
}

/** Admits everything and says nothing: the limiter of processes that serve no requests (the admin tool). */
export const noRateLimits: RateLimiter = { admit: async () => null };

/** The two buckets' rules from the API configuration. */
export function rateLimitRules(config: {
  RATE_LIMIT_TOKEN_PER_SECOND: number;
  RATE_LIMIT_TOKEN_BURST: number;
  RATE_LIMIT_TENANT_PER_SECOND: number;
  RATE_LIMIT_TENANT_BURST: number;
}): RateLimitRules {
  return {
    token: { perSecond: config.RATE_LIMIT_TOKEN_PER_SECOND, burst: config.RATE_LIMIT_TOKEN_BURST },
    tenant: { perSecond: config.RATE_LIMIT_TENANT_PER_SECOND, burst: config.RATE_LIMIT_TENANT_BURST },
  };
}

export const isRuleOn = (rule: BucketRule) => rule.perSecond > 0;

/**
 * One admission from the buckets' readings (null for a bucket that is off). The request is allowed
 * when no bucket refused it. A refusal describes the bucket that refused (the longer wait when
 * both did); an admission describes the bucket with fewer requests left (the slower to refill on a
 * tie), as the RateLimit header drafts advise. Null when both buckets are off.
 */
export function decideAdmission(
  rules: RateLimitRules,
  readings: Record<RateScope, BucketReading | null>,
): RateAdmission | null {
  const present = (["token", "tenant"] as const).flatMap((scope) => {
    const reading = readings[scope];
    return reading ? [{ scope, reading }] : [];
  });
  const refusing = present.filter(({ reading }) => reading.retryInMs > 0);
  const allowed = refusing.length === 0;
  // Sorting is stable: on a full tie the token's bucket, listed first, is the one described.
  const chosen = allowed
    ? present.sort(
        (a, b) => a.reading.remaining - b.reading.remaining || b.reading.fullInMs - a.reading.fullInMs,
      )[0]
    : refusing.sort((a, b) => b.reading.retryInMs - a.reading.retryInMs)[0];
  if (!chosen) return null;
  const { scope, reading } = chosen;
  return {
    allowed,
    scope,
    limit: rules[scope].burst,
    perSecond: rules[scope].perSecond,
    remaining: Math.max(0, reading.remaining),
    resetSeconds: Math.ceil(reading.fullInMs / 1000),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(reading.retryInMs / 1000)),
  };
}

/** @throws RateLimitedError when the admission refused the request, saying which limit and when to retry. */
export function assertAdmitted(admission: RateAdmission | null): void {
  if (!admission || admission.allowed) return;
  const whose = admission.scope === "token" ? "this token" : "this token's tenant";
  throw new RateLimitedError(
    `too many requests for ${whose} (${admission.perSecond} a second, bursts of ${admission.limit}); retry after ${admission.retryAfterSeconds} s`,
    admission.retryAfterSeconds,
  );
}
