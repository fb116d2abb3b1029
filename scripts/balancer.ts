/**
 * The local cluster's load balancer: a request in, the same request (method,
 * path and query, headers, body) to the next API process in turn out, its
 * answer streamed back. WebSocket upgrades (live subscriptions at
 * `/graphql/subscriptions`) are relayed message by message to a backend chosen
 * the same way, with the subprotocol the backend chose and the close codes
 * either side sends. A backend that refuses the connection (stopped, killed,
 * restarting) is skipped for the next; so is one whose connection fails for a
 * request that may be repeated (GET, PUT, DELETE…); a POST whose connection
 * fails is answered 502 (it may have been committed: the client finds out);
 * a request no backend accepts is answered 503 `unavailable`. Small on purpose: for trying several processes
 * on one machine and for tests, not a production proxy (no TLS, no
 * backpressure on relayed WebSocket messages, bodies buffered).
 */
import type { Server, ServerWebSocket } from "bun";

/**
 * Bodies are read whole before they are forwarded, so one can be sent again to the next backend when
 * a backend refuses the connection. Far above the API's own limit (MAX_BODY_BYTES, 1 MiB by
 * default), so an oversized body still gets the API's `413 payload_too_large`, not Bun's bare one.
 */
export const BALANCER_MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Above the API's own idle timeout (Bun's default, 10 s), so the API decides when a slow request ends. */
const IDLE_TIMEOUT_SECONDS = 30;

/** Headers that describe one connection, not the request (RFC 9110 §7.6.1), and the WebSocket handshake's own. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "sec-websocket-key",
  "sec-websocket-version",
  "sec-websocket-extensions",
  "sec-websocket-protocol",
]);

/** Methods whose repetition has the effect of one request (RFC 9110 §9.2.2). */
const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);

/** Close codes an endpoint may not send (RFC 6455 §7.4.1): reported locally only. */
const UNSENDABLE_CLOSE_CODES = new Set([1005, 1006, 1015]);

/** What a relayed socket tells the client when its backend went away without a close frame: Service Restart. */
const BACKEND_GONE_CLOSE = 1012;

/**
 * Round-robin order: the `n` backends starting at the `turn`-th (mod n), each once, so a request
 * tries the next backend first and every other one after it.
 */
export function backendOrder(turn: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => (turn + i) % n);
}

/**
 * The headers a backend is sent: the client's, without hop-by-hop and handshake headers, with
 * `x-forwarded-for` (appended to any the client sent), `x-forwarded-host` and `x-forwarded-proto`.
 */
export function forwardedHeaders(incoming: Headers, clientAddress: string | null, url: URL): Headers {
  const headers = new Headers();
  const named = (incoming.get("connection") ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "");
  for (const [name, value] of incoming)
    if (!HOP_BY_HOP.has(name) && !named.includes(name)) headers.append(name, value);
  if (clientAddress) {
    const before = incoming.get("x-forwarded-for");
    headers.set("x-forwarded-for", before ? `${before}, ${clientAddress}` : clientAddress);
  }
  headers.set("x-forwarded-host", url.host);
  headers.set("x-forwarded-proto", url.protocol.replace(":", ""));
  return headers;
}

/** True for the error a connection refused throws (nothing listens there: the process is down). */
export function isConnectionRefused(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === "ECONNREFUSED";
}

/** A `{"errorType","message"}` answer, the service's error shape (SPEC §2). */
function errorAnswer(status: number, message: string): Response {
  return Response.json({ errorType: "unavailable", message }, { status });
}

export interface BalancerOptions {
  /** The backends' base URLs (`http://127.0.0.1:3001`), tried in turn. */
  backends: readonly string[];
  /** Default 127.0.0.1. */
  hostname?: string;
  /** 0 picks a free port. */
  port: number;
}

export interface Balancer {
  url: string;
  port: number;
  /** How many requests each backend answered (any status), in the order of `backends`. */
  answered(): number[];
  /** Stops listening and closes open connections (relayed sockets included). */
  stop(): Promise<void>;
}

/** A relayed WebSocket: the backend's socket, what it said before the client's side opened, and its close. */
interface Relay {
  backend: WebSocket;
  early: (string | ArrayBuffer)[];
  closed: { code: number; reason: string } | null;
}

/** Opens a WebSocket to `target`; null when it does not open (connection refused or handshake refused). */
async function openBackendSocket(
  target: string,
  headers: Headers,
  protocols: string[],
): Promise<Relay | null> {
  const relay: Relay = {
    backend: new WebSocket(target, { headers: Object.fromEntries(headers), protocols }),
    early: [],
    closed: null,
  };
  relay.backend.binaryType = "arraybuffer";
  relay.backend.onmessage = (event) => relay.early.push(event.data);
  const opened = await new Promise<boolean>((resolve) => {
    relay.backend.onopen = () => resolve(true);
    relay.backend.onclose = () => resolve(false);
  });
  // Until the client's side opens, a close is kept for it (the API closes a socket at once, 4406, when
  // no subprotocol fits).
  relay.backend.onclose = (event) => {
    relay.closed = { code: event.code, reason: event.reason };
  };
  return opened ? relay : null;
}

/** True when something listens at `base` (any HTTP answer); false when the connection is refused. */
async function isListening(base: string): Promise<boolean> {
  try {
    await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2000) });
    return true;
  } catch (error) {
    return !isConnectionRefused(error);
  }
}

/** A close code the client can be sent for the backend's close. */
const relayedCode = (code: number) => (UNSENDABLE_CLOSE_CODES.has(code) ? BACKEND_GONE_CLOSE : code);

/** Starts the balancer. @throws when the port is taken. */
export function startBalancer(options: BalancerOptions): Balancer {
  const { backends } = options;
  if (backends.length === 0) throw new Error("the balancer needs at least one backend");
  let turn = 0;
  /** The backends' indexes in the order the next request tries them. */
  const nextOrder = () => backendOrder(turn++, backends.length);
  const answers = backends.map(() => 0);

  async function forward(request: Request, server: Server<Relay>): Promise<Response> {
    const url = new URL(request.url);
    const headers = forwardedHeaders(request.headers, server.requestIP(request)?.address ?? null, url);
    const body = request.body === null ? undefined : await request.arrayBuffer();
    for (const index of nextOrder()) {
      const backend = backends[index] as string;
      try {
        const response = await fetch(`${backend}${url.pathname}${url.search}`, {
          method: request.method,
          headers,
          body,
          redirect: "manual",
          // Passed on as the backend sent it: encoded bodies stay encoded, their headers true.
          decompress: false,
          // A connection per request: one kept from earlier to a process killed since fails with
          // ECONNRESET, which cannot tell a request never sent from one lost on the way; a new one is
          // refused, and refused means not sent, so the next backend may have it.
          keepalive: false,
        });
        answers[index] = (answers[index] ?? 0) + 1;
        return response;
      } catch (error) {
        // Refused: never sent, the next backend may have it. Otherwise it may have been read before
        // the connection died (a process killed mid-request, or in the moment its threads exit), so
        // only a request that may be repeated is sent on (nginx's proxy_next_upstream rule).
        if (isConnectionRefused(error) || IDEMPOTENT_METHODS.has(request.method)) continue;
        return errorAnswer(502, `the API process at ${backend} failed: ${String(error)}`);
      }
    }
    return errorAnswer(503, "no API process accepted the connection");
  }

  async function upgrade(request: Request, server: Server<Relay>): Promise<Response | undefined> {
    const url = new URL(request.url);
    const headers = forwardedHeaders(request.headers, server.requestIP(request)?.address ?? null, url);
    const protocols = (request.headers.get("sec-websocket-protocol") ?? "")
      .split(",")
      .map((p) => p.trim())
      .filter((p) => p !== "");
    for (const index of nextOrder()) {
      const backend = backends[index] as string;
      const target = `${backend.replace(/^http/, "ws")}${url.pathname}${url.search}`;
      const relay = await openBackendSocket(target, headers, protocols);
      if (!relay) {
        if (await isListening(backend))
          return errorAnswer(502, `the API process at ${backend} refused the WebSocket handshake`);
        continue;
      }
      const chosen = relay.backend.protocol;
      const upgraded = server.upgrade(request, {
        data: relay,
        headers: chosen ? { "Sec-WebSocket-Protocol": chosen } : {},
      });
      if (upgraded) return undefined;
      relay.backend.close();
      return errorAnswer(400, "the WebSocket upgrade failed");
    }
    return errorAnswer(503, "no API process accepted the WebSocket connection");
  }

  const server = Bun.serve<Relay>({
    hostname: options.hostname ?? "127.0.0.1",
    port: options.port,
    maxRequestBodySize: BALANCER_MAX_BODY_BYTES,
    idleTimeout: IDLE_TIMEOUT_SECONDS,
    fetch(request, server) {
      const isUpgrade = request.headers.get("upgrade")?.toLowerCase() === "websocket";
      return isUpgrade ? upgrade(request, server) : forward(request, server);
    },
    websocket: {
      open(client: ServerWebSocket<Relay>) {
        const relay = client.data;
        for (const message of relay.early) client.send(message);
        relay.early.length = 0;
        if (relay.closed) return client.close(relayedCode(relay.closed.code), relay.closed.reason);
        relay.backend.onmessage = (event) => client.send(event.data);
        relay.backend.onclose = (event) => client.close(relayedCode(event.code), event.reason);
      },
      message(client, message) {
        client.data.backend.send(message);
      },
      close(client, code, reason) {
        const { backend } = client.data;
        if (backend.readyState === WebSocket.CLOSED || backend.readyState === WebSocket.CLOSING) return;
        if (UNSENDABLE_CLOSE_CODES.has(code)) backend.close();
        else backend.close(code, reason);
      },
    },
  });
  return {
    url: `http://${server.hostname}:${server.port}`,
    port: server.port as number,
    answered: () => [...answers],
    stop: () => server.stop(true),
  };
}
