/**
 * Sends one DeliveryRequest: the URL's host is resolved and checked by the
 * SSRF guard, then the POST goes to a checked address (Host header and TLS
 * server name set to the URL's host, so virtual hosting and certificate
 * checks work as usual). Out comes an AttemptResult, its texts (error, response
 * excerpt) passed through the request's redactor; it never throws.
 */

import { setNewest } from "../common/bounded-map.ts";
import type { DeliveryRequest } from "./build-request.ts";
import type { SendError } from "./classify-response.ts";
import type { Redactor } from "./redact-secrets.ts";
import type { DestinationPolicy } from "./ssrf/destination-policy.ts";
import { parseIp } from "./ssrf/ip-address.ts";
import {
  DestinationError,
  type LookupHost,
  resolveDestination,
  systemLookup,
} from "./ssrf/resolve-destination.ts";

/** How much of a response body is kept in the delivery log. */
export const RESPONSE_BODY_LIMIT = 1024;

/** What one attempt produced. */
export interface AttemptResult {
  /** When the attempt started, ms since the epoch. */
  startedAt: number;
  durationMs: number;
  /** The HTTP status, when an answer came. */
  status: number | null;
  headers: Headers | null;
  /** The first RESPONSE_BODY_LIMIT bytes of the answer's body, as text, secret values redacted. */
  responseBody: string | null;
  /** Why no answer came (its message with secret values redacted). */
  error: SendError | null;
  /** The caller's signal stopped the attempt (shutdown): its result says nothing about the receiver. */
  interrupted: boolean;
}

/**
 * Sends `request`; `signal` (the caller's: shutdown) interrupts it. `onSlow` is called once when no
 * answer has come SLOW_ATTEMPT_MS after the attempt started (it then waits on a slow endpoint rather
 * than works).
 */
export type SendDelivery = (
  request: DeliveryRequest,
  signal?: AbortSignal,
  onSlow?: () => void,
) => Promise<AttemptResult>;

export interface HttpSenderOptions {
  policy: DestinationPolicy;
  /** Whole attempt: resolution, connection, answer and the kept part of the body. */
  timeoutMs: number;
  /** Default: the system resolver. */
  lookupHost?: LookupHost;
  /** Extra trusted CA certificates (PEM), e.g. a test receiver's self-signed one. */
  tlsCa?: string;
  now?: () => number;
}

// Errors that mean the address never took the connection, so the next checked address may be tried.
const UNREACHED = new Set([
  "ECONNREFUSED",
  "ConnectionRefused",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
]);

const utf8 = new TextDecoder();

/** Reads at most `limit` bytes of a body and drops the rest. */
function readHead(response: Response, limit: number): Promise<string> {
  // Most receivers answer a few bytes with a length: read those whole (no more than `limit` bytes),
  // without a stream (`body` itself makes one).
  const length = Number(response.headers.get("content-length") ?? Number.NaN);
  if (length <= limit) return response.text().catch(() => "");
  return response.body ? readStreamHead(response.body, limit) : Promise.resolve("");
}

/** The first `limit` bytes of a body of unknown or larger length; the rest is cancelled. */
async function readStreamHead(body: ReadableStream<Uint8Array>, limit: number): Promise<string> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
    // A body cut off (timeout, reset) keeps what arrived; the status already tells the outcome.
  } finally {
    reader.cancel().catch(() => undefined);
  }
  return utf8.decode(Buffer.concat(chunks).subarray(0, limit));
}

/**
 * The response excerpt to keep: `text` (read RESPONSE_BODY_LIMIT + `redactor.reach` bytes far) with
 * secret values redacted, then cut to RESPONSE_BODY_LIMIT bytes. Redacting before the cut is what
 * catches a value the cut would have split: its first half would be kept, unrecognised.
 */
function keptExcerpt(text: string, redactor: Redactor): string {
  if (redactor.reach === 0) return text;
  return utf8.decode(Buffer.from(redactor.redact(text)).subarray(0, RESPONSE_BODY_LIMIT));
}

/** IP-literal destinations whose check is remembered; beyond this many, the oldest is forgotten. */
const REMEMBERED_LITERALS = 1024;

/** How often, at most, the attempts in flight are checked for their timeout, their caller's signal and slowness. */
const CHECK_EVERY_MS = 100;

/** How long an attempt waits for its answer before it counts as slow (and its `onSlow` is called). */
const SLOW_ATTEMPT_MS = 500;

/** The URL's host without the brackets of an IPv6 literal. */
const hostOf = (url: URL) => (url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname);

/** `url` with its host replaced by `address`; everything else (path, query, credentials) kept. */
function pinnedUrl(url: URL, address: string): URL {
  const pinned = new URL(url);
  pinned.hostname = parseIp(address)?.version === 6 ? `[${address}]` : address;
  return pinned;
}

const describe = (error: unknown): { code: string | undefined; message: string } => {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  return { code, message: code && !message.includes(code) ? `${code}: ${message}` : message };
};

/**
 * An attempt in flight: aborted through `controller` past `deadline` (ms since the epoch) or once
 * `outer` is; `onSlow` called (then cleared) past `slowAt`.
 */
interface Watched {
  controller: AbortController;
  deadline: number;
  outer: AbortSignal | undefined;
  slowAt: number;
  onSlow: (() => void) | undefined;
}

/** Creates the sender. Redirects are returned, never followed. */
export function createHttpSender(options: HttpSenderOptions): SendDelivery {
  const { policy, timeoutMs, lookupHost = systemLookup, tlsCa, now = Date.now } = options;

  // An IP literal resolves to itself and the policy is fixed: its verdict cannot change, so it is
  // checked once. Names are resolved (and their addresses checked) on every attempt. A URL object
  // (shared by the attempts of one webhook definition) finds its literal's verdict without its key.
  const literals = new Map<string, Promise<string[]>>();
  const literalOf = new WeakMap<URL, Promise<string[]>>();
  const destination = (url: URL): Promise<string[]> => {
    const known = literalOf.get(url);
    if (known) return known;
    const key = `${url.protocol}${url.hostname}`;
    let checked = literals.get(key);
    if (!checked) {
      checked = resolveDestination(url, policy, lookupHost);
      if (parseIp(hostOf(url)) === null) return checked;
      checked.catch(() => undefined);
      setNewest(literals, key, checked, REMEMBERED_LITERALS);
    }
    literalOf.set(url, checked);
    return checked;
  };

  // The attempts in flight, checked together by one interval (running while there are any): each
  // had two timers (timeout, slowness) and a listener on its caller's signal, set and removed again
  // by every attempt. An attempt times out between timeoutMs and timeoutMs + checkMs after it
  // started, counts as slow within checkMs past SLOW_ATTEMPT_MS, and one whose caller's signal is
  // aborted (shutdown) is stopped within checkMs.
  const watched = new Set<Watched>();
  const checkMs = Math.max(1, Math.min(CHECK_EVERY_MS, Math.ceil(timeoutMs / 10)));
  let checker: ReturnType<typeof setInterval> | null = null;
  const check = () => {
    const at = Date.now();
    for (const attempt of watched) {
      const { onSlow } = attempt;
      if (onSlow !== undefined && at >= attempt.slowAt) {
        attempt.onSlow = undefined;
        onSlow();
      }
      if (attempt.outer?.aborted) attempt.controller.abort(attempt.outer.reason);
      else if (at >= attempt.deadline)
        attempt.controller.abort(new DOMException("timed out", "TimeoutError"));
      else continue;
      watched.delete(attempt);
    }
    if (watched.size === 0 && checker !== null) {
      clearInterval(checker);
      checker = null;
    }
  };
  const watch = (attempt: Watched) => {
    watched.add(attempt);
    if (checker === null) {
      checker = setInterval(check, checkMs);
      checker.unref();
    }
  };

  const post = (request: DeliveryRequest, address: string, signal: AbortSignal) => {
    const { url } = request;
    const https = url.protocol === "https:";
    const pinned = hostOf(url) !== address;
    // Pinned to a resolved address: Host and the TLS server name still name the URL's host. A
    // literal address needs neither: fetch derives both.
    const init: BunFetchRequestInit = {
      method: "POST",
      headers: pinned ? { ...request.headers, host: url.host } : request.headers,
      body: request.body,
      redirect: "manual",
      signal,
    };
    if (https)
      init.tls = { ...(pinned ? { serverName: url.hostname } : {}), ...(tlsCa ? { ca: tlsCa } : {}) };
    return fetch(pinned ? pinnedUrl(url, address) : url, init);
  };

  /** What an attempt that started at `startedAt` produced, ending now: its answer, or why none came. */
  const resultOf = (
    startedAt: number,
    answer: Pick<AttemptResult, "status" | "headers" | "responseBody"> | null,
    error: SendError | null = null,
    interrupted = false,
  ): AttemptResult => ({
    startedAt,
    durationMs: Math.max(0, now() - startedAt),
    status: answer?.status ?? null,
    headers: answer?.headers ?? null,
    responseBody: answer?.responseBody ?? null,
    error,
    interrupted,
  });

  return async (request, outer, onSlow) => {
    const startedAt = now();
    // Its own controller, aborted by the checker: AbortSignal.timeout would keep the attempt's objects
    // (signal, request) alive for the whole timeout — ~25,000 attempts' worth at 1,000/s.
    const timeout = new AbortController();
    const clock = Date.now();
    const attempt: Watched = {
      controller: timeout,
      deadline: clock + timeoutMs,
      outer,
      slowAt: clock + SLOW_ATTEMPT_MS,
      onSlow,
    };
    if (outer?.aborted) timeout.abort(outer.reason);
    else watch(attempt);
    const { signal } = timeout;
    let onAbort: (() => void) | null = null;
    try {
      const resolving = destination(request.url);
      // A remembered literal needs no race against the timeout; a name being resolved does.
      const addresses =
        Bun.peek.status(resolving) === "fulfilled"
          ? (Bun.peek(resolving) as string[])
          : await Promise.race([
              resolving,
              new Promise<never>((_, reject) => {
                if (signal.aborted) reject(signal.reason);
                onAbort = () => reject(signal.reason);
                signal.addEventListener("abort", onAbort, { once: true });
              }),
            ]);
      let lastError: unknown;
      for (const address of addresses) {
        try {
          const response = await post(request, address, signal);
          const head = await readHead(response, RESPONSE_BODY_LIMIT + request.redactor.reach);
          const responseBody = keptExcerpt(head, request.redactor);
          return resultOf(startedAt, { status: response.status, headers: response.headers, responseBody });
        } catch (error) {
          lastError = error;
          if (signal.aborted || !UNREACHED.has(describe(error).code ?? "")) break;
        }
      }
      throw lastError;
    } catch (error) {
      if (outer?.aborted)
        return resultOf(startedAt, null, { kind: "connection", message: "interrupted" }, true);
      if (timeout.signal.aborted)
        return resultOf(startedAt, null, { kind: "timeout", message: `no answer within ${timeoutMs} ms` });
      // Both name the URL's host, or quote the URL, which may hold secret values.
      const { redact } = request.redactor;
      if (error instanceof DestinationError)
        return resultOf(startedAt, null, { kind: error.kind, message: redact(error.message) });
      return resultOf(startedAt, null, { kind: "connection", message: redact(describe(error).message) });
    } finally {
      watched.delete(attempt);
      if (onAbort !== null) signal.removeEventListener("abort", onAbort);
    }
  };
}
