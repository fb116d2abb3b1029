/**
 * Cross-origin rules (the Fetch standard's CORS protocol): a request's Origin and, for a
 * preflight, the method and headers it asks for, in; the headers to answer with, or why the
 * preflight is refused, out. Pure. Tokens travel in `Authorization`, never in cookies, so
 * credentials are never allowed and `*` may stand for any origin safely.
 */

/** Which origins may call: a set of exact origins, or any. Empty: no cross-origin access (the default). */
export interface CorsPolicy {
  anyOrigin: boolean;
  origins: ReadonlySet<string>;
}

/** Response headers a browser script may read: the rate-limit budget, retry hints, the request id, ETag. */
export const EXPOSED_HEADERS = [
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "Retry-After",
  "X-Request-Id",
  "ETag",
  "Allow",
];

/**
 * Request headers a cross-origin script may send (beyond the CORS-safelisted ones): the token, JSON
 * bodies, conditional schema reads, its own request id, and Apollo Client's awareness headers.
 */
export const ALLOWED_REQUEST_HEADERS = [
  "authorization",
  "content-type",
  "accept",
  "if-none-match",
  "x-request-id",
  "apollographql-client-name",
  "apollographql-client-version",
  "apollo-require-preflight",
];

/** How long a browser may reuse a preflight's answer, in seconds (browsers cap it at 2 h or less). */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** The policy from `CORS_ORIGINS`' entries (`*` anywhere means any origin). */
export function corsPolicy(origins: readonly string[]): CorsPolicy {
  return { anyOrigin: origins.includes("*"), origins: new Set(origins.filter((origin) => origin !== "*")) };
}

const isCorsOn = (policy: CorsPolicy) => policy.anyOrigin || policy.origins.size > 0;

const isOriginAllowed = (policy: CorsPolicy, origin: string) =>
  policy.anyOrigin || policy.origins.has(origin);

/**
 * Headers for an ordinary (not preflight) response. `Vary: Origin` whenever cross-origin access is
 * on, since the answer then depends on the Origin; nothing when it is off (every origin gets the same).
 */
export function corsResponseHeaders(policy: CorsPolicy, origin: string | null): Record<string, string> {
  if (!isCorsOn(policy)) return {};
  if (origin === null || !isOriginAllowed(policy, origin)) return { vary: "Origin" };
  return {
    vary: "Origin",
    "access-control-allow-origin": origin,
    "access-control-expose-headers": EXPOSED_HEADERS.join(", "),
  };
}

/** A preflight (an OPTIONS request with Origin and Access-Control-Request-Method). */
export interface Preflight {
  origin: string;
  method: string;
  /** Access-Control-Request-Headers as sent (comma-separated), or null. */
  headers: string | null;
}

export type PreflightAnswer =
  | { allowed: true; headers: Record<string, string> }
  | { allowed: false; reason: "origin" | "method" | "headers"; message: string };

/**
 * The answer to a preflight at a path whose methods are `pathMethods` (route-table.ts): 204 headers
 * when the origin, the method and every requested header are allowed; otherwise which one is not.
 */
export function answerPreflight(
  policy: CorsPolicy,
  preflight: Preflight,
  pathMethods: string[],
): PreflightAnswer {
  if (!isOriginAllowed(policy, preflight.origin)) {
    return {
      allowed: false,
      reason: "origin",
      message: `cross-origin requests from ${preflight.origin} are not allowed (CORS_ORIGINS)`,
    };
  }
  const method = preflight.method.toUpperCase();
  if (!pathMethods.includes(method)) {
    return { allowed: false, reason: "method", message: `${method} is not a method of this path` };
  }
  const requested = (preflight.headers ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "");
  const refused = requested.filter((name) => !ALLOWED_REQUEST_HEADERS.includes(name));
  if (refused.length > 0) {
    return {
      allowed: false,
      reason: "headers",
      message: `request headers not allowed: ${refused.join(", ")}`,
    };
  }
  return {
    allowed: true,
    headers: {
      vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
      "access-control-allow-origin": preflight.origin,
      "access-control-allow-methods": pathMethods.join(", "),
      "access-control-allow-headers": ALLOWED_REQUEST_HEADERS.join(", "),
      "access-control-max-age": String(PREFLIGHT_MAX_AGE_SECONDS),
    },
  };
}
