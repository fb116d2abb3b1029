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

export type SendDelivery = (request: DeliveryRequest, signal?: AbortSignal) => Promise<AttemptResult>;

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

/** Creates the sender. Redirects are returned, never followed. */
export function createHttpSender(options: HttpSenderOptions): SendDelivery {
  const { policy, timeoutMs, lookupHost = systemLookup, tlsCa, now = Date.now } = options;

  // An IP literal resolves to itself and the policy is fixed: its verdict cannot change, so it is
  // checked once. Names are resolved (and their addresses checked) on every attempt.
  const literals = new Map<string, Promise<string[]>>();
  const destination = (url: URL): Promise<string[]> => {
    const key = `${url.protocol}${url.hostname}`;
    let checked = literals.get(key);
    if (!checked) {
      checked = resolveDestination(url, policy, lookupHost);
      if (parseIp(hostOf(url)) === null) return checked;
      checked.catch(() => undefined);
      setNewest(literals, key, checked, REMEMBERED_LITERALS);
    }
    return checked;
  };

  const post = (request: DeliveryRequest, address: string, signal: AbortSignal) => {
    const { url } = request;
    const https = url.protocol === "https:";
    const pinned = hostOf(url) !== address;
    // Pinned to a resolved address: Host and the TLS server name still name the URL's host. A
    // literal address needs neither: fetch derives both.
    const headers = pinned ? { ...request.headers, host: url.host } : request.headers;
    const tls = https && pinned ? { serverName: url.hostname } : {};
    return fetch(pinned ? pinnedUrl(url, address) : url, {
      method: "POST",
      headers,
      body: request.body,
      redirect: "manual",
      signal,
      ...(https ? { tls: { ...tls, ...(tlsCa ? { ca: tlsCa } : {}) } } : {}),
    });
  };

  return async (request, outer) => {
    const startedAt = now();
    // A timer cleared when the attempt ends: AbortSignal.timeout would keep the attempt's objects
    // (signal, listeners, request) alive for the whole timeout — ~25,000 attempts' worth at 1,000/s.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new DOMException("timed out", "TimeoutError")), timeoutMs);
    // Shutdown aborts the attempt through the same controller (cheaper than AbortSignal.any per attempt).
    const interrupt = () => timeout.abort(outer?.reason);
    if (outer?.aborted) interrupt();
    else outer?.addEventListener("abort", interrupt, { once: true });
    const signal = timeout.signal;
    let onAbort: () => void = () => undefined;
    const result = (part: Partial<AttemptResult>): AttemptResult => ({
      startedAt,
      durationMs: Math.max(0, now() - startedAt),
      status: null,
      headers: null,
      responseBody: null,
      error: null,
      interrupted: false,
      ...part,
    });
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
          return result({ status: response.status, headers: response.headers, responseBody });
        } catch (error) {
          lastError = error;
          if (signal.aborted || !UNREACHED.has(describe(error).code ?? "")) break;
        }
      }
      throw lastError;
    } catch (error) {
      if (outer?.aborted)
        return result({ interrupted: true, error: { kind: "connection", message: "interrupted" } });
      if (timeout.signal.aborted)
        return result({ error: { kind: "timeout", message: `no answer within ${timeoutMs} ms` } });
      // Both name the URL's host, or quote the URL, which may hold secret values.
      const { redact } = request.redactor;
      if (error instanceof DestinationError)
        return result({ error: { kind: error.kind, message: redact(error.message) } });
      return result({ error: { kind: "connection", message: redact(describe(error).message) } });
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      outer?.removeEventListener("abort", interrupt);
    }
  };
}
