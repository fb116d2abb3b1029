/**
 * What one attempt's answer means for the delivery: an HTTP status and its
 * headers, or the error that prevented one, in; a ResponseClass out. Pure:
 * the clock reading needed for an HTTP-date `Retry-After` is passed in.
 */

/** Why an attempt got no HTTP answer. */
export type SendErrorKind =
  /** No complete answer within the delivery timeout. */
  | "timeout"
  /** Connection refused or reset, TLS failure, ... */
  | "connection"
  /** The host name did not resolve. */
  | "dns"
  /** Not sent by policy: scheme not allowed, destination address refused (SSRF guard). */
  | "refused";

export interface SendError {
  kind: SendErrorKind;
  message: string;
}

/** The meaning of one attempt's outcome. */
export type ResponseClass =
  | { kind: "delivered" }
  /** Failed; try again by the retry schedule. */
  | { kind: "retry"; reason: string }
  /** Failed; the receiver asked for this wait before the next try. */
  | { kind: "retry-after"; delayMs: number; reason: string }
  /** Failed in a way no retry can mend. */
  | { kind: "give-up"; reason: string }
  /** The receiver says the endpoint is gone: disable the webhook. */
  | { kind: "disable-endpoint"; reason: string };

/** A header lookup: the Fetch `Headers` fits. */
export interface HeaderLookup {
  get(name: string): string | null;
}

export interface ClassifyContext {
  /** Now, ms since the epoch (for an HTTP-date Retry-After). */
  now: number;
  /** Longest Retry-After honoured; a longer one is cut to this. */
  maxRetryAfterMs: number;
}

/**
 * Classifies one attempt. 2xx → delivered. 410 → disable-endpoint. 429 and
 * 503 with a usable `Retry-After` → retry-after (clamped to
 * `[0, maxRetryAfterMs]`). Every other status — 3xx (redirects are not
 * followed), 408, 429, 5xx and the other 4xx — → retry. Errors: `refused` →
 * give-up; timeouts, connection and DNS errors → retry.
 */
export function classifyResponse(
  status: number | null,
  headers: HeaderLookup | null,
  error: SendError | null,
  context: ClassifyContext,
): ResponseClass {
  if (error) {
    return error.kind === "refused"
      ? { kind: "give-up", reason: error.message }
      : { kind: "retry", reason: error.message };
  }
  if (status === null) return { kind: "retry", reason: "no response" };
  if (status >= 200 && status < 300) return { kind: "delivered" };
  if (status === 410)
    return { kind: "disable-endpoint", reason: "HTTP 410 Gone: the endpoint asked to stop" };
  if (status >= 300 && status < 400) {
    const location = headers?.get("location");
    return {
      kind: "retry",
      reason: `HTTP ${status}: redirect not followed${location ? ` (to ${location})` : ""}`,
    };
  }
  if (status === 429 || status === 503) {
    const delayMs = parseRetryAfter(headers?.get("retry-after") ?? null, context.now);
    if (delayMs !== null) {
      return {
        kind: "retry-after",
        delayMs: Math.min(delayMs, context.maxRetryAfterMs),
        reason: `HTTP ${status} with Retry-After`,
      };
    }
  }
  return { kind: "retry", reason: `HTTP ${status}` };
}

/**
 * A `Retry-After` value as a wait in ms: delay-seconds (`120`) or an
 * HTTP-date (`Wed, 21 Oct 2015 07:28:00 GMT`, a past one meaning 0). Null when
 * absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Every HTTP-date form starts with a weekday; requiring one keeps Date.parse from reading inputs like "5 min".
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /.test(text)) return null;
  // asctime dates carry no zone but mean GMT; Date.parse would read them as local time.
  const at = Date.parse(/\d{4}$/.test(text) ? `${text} GMT` : text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
