/**
 * Sends one DeliveryRequest: the URL's host is resolved and checked by the
 * SSRF guard, then the POST goes to a checked address over the HTTP/1.1
 * client (http1/; Host header and TLS server name set to the URL's host, so
 * virtual hosting and certificate checks work as usual). Out comes an
 * AttemptResult; it never throws.
 */

import { setNewest } from "../common/bounded-map.ts";
import type { DeliveryRequest } from "./build-request.ts";
import type { HeaderLookup, SendError } from "./classify-response.ts";
import { createHttp1Client } from "./http1/http1-client.ts";
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
  headers: HeaderLookup | null;
  /** The first RESPONSE_BODY_LIMIT bytes of the answer's body, as text. */
  responseBody: string | null;
  /** Why no answer came. */
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

/** How long a connection to a receiver stays open unused (under the usual 5 s of servers' keep-alive). */
const IDLE_CONNECTION_MS = 4000;

/** The answer's headers, looked up by lower-case name. */
const headerLookup = (headers: readonly [string, string][]): HeaderLookup => ({
  get: (name) => headers.find(([n]) => n === name)?.[1] ?? null,
});

/** The request's bytes: a POST of `body` to `url`'s path, with Host and Content-Length, then `headers`. */
function serialise(url: URL, headers: Headers, body: string): Uint8Array {
  let head = `POST ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
  if ((url.username || url.password) && !headers.has("authorization")) {
    const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    head += `authorization: Basic ${Buffer.from(credentials).toString("base64")}\r\n`;
  }
  headers.forEach((value, name) => {
    if (name !== "host" && name !== "content-length") head += `${name}: ${value}\r\n`;
  });
  head += "\r\n";
  // Header values are byte strings (Headers refused anything else), sent a byte a character; the body is UTF-8.
  return Buffer.byteLength(head) === head.length
    ? Buffer.from(head + body)
    : Buffer.concat([Buffer.from(head, "latin1"), Buffer.from(body)]);
}

/** IP-literal destinations whose check is remembered; beyond this many, the oldest is forgotten. */
const REMEMBERED_LITERALS = 1024;

/** The URL's host without the brackets of an IPv6 literal. */
const hostOf = (url: URL) => (url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname);

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

  const client = createHttp1Client({ keep: RESPONSE_BODY_LIMIT, idleMs: IDLE_CONNECTION_MS });
  // Pinned to a checked address; Host and the TLS server name name the URL's host (virtual hosting, certificates).
  const post = (request: DeliveryRequest, address: string, signal: AbortSignal) => {
    const { url } = request;
    const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
    const tls =
      url.protocol === "https:" ? { serverName: hostOf(url), ...(tlsCa ? { ca: tlsCa } : {}) } : null;
    return client.send({ address, port, tls }, serialise(url, request.headers, request.body), signal);
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
          return result({
            status: response.status,
            headers: headerLookup(response.headers),
            responseBody: utf8.decode(response.body),
          });
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
      if (error instanceof DestinationError)
        return result({ error: { kind: error.kind, message: error.message } });
      return result({ error: { kind: "connection", message: describe(error).message } });
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      outer?.removeEventListener("abort", interrupt);
    }
  };
}
