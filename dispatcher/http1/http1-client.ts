/**
 * POSTs over HTTP/1.1 to an address already checked by the SSRF guard, over
 * kept-alive connections (Bun.connect, TLS with the URL's host as server name).
 * One request per connection at a time; a connection idle for `idleMs` is
 * closed. A request on a kept connection that the receiver closed meanwhile
 * (before any answer) goes again once on a new one. The answer is read by
 * response-parser.ts. Built on sockets rather than fetch: a delivery's request
 * then costs the dispatcher about half the CPU (bench/results/dispatch.md).
 */
import type { Socket } from "bun";
import { createResponseParser, type ParsedResponse, type ResponseParser } from "./response-parser.ts";

/** Where a request goes: the checked address, and for TLS the name the certificate must carry. */
export interface Http1Target {
  address: string;
  port: number;
  /** null for plain HTTP. */
  tls: { serverName: string; ca?: string } | null;
}

/** One request and what to do with its answer. */
interface Exchange {
  parser: ResponseParser;
  resolve: (response: ParsedResponse) => void;
  reject: (error: Error) => void;
  /** Bytes still to write (the socket took less than all). */
  unsent: Uint8Array | null;
  /** The connection was taken from the idle ones (and may have been closed by the receiver meanwhile). */
  reused: boolean;
}

interface Connection {
  key: string;
  exchange: Exchange | null;
  idle: ReturnType<typeof setTimeout> | null;
  closed: boolean;
}

type Conn = Socket<Connection>;

/** A kept connection the receiver had closed: the request never reached it, so it may go again. */
class StaleConnectionError extends Error {}

export interface Http1ClientOptions {
  /** Body bytes kept of each answer. */
  keep: number;
  /** How long an unused connection stays open. */
  idleMs: number;
}

export interface Http1Client {
  /** Sends `request` (head and body, already serialised); aborted with `signal`. */
  send(target: Http1Target, request: Uint8Array, signal: AbortSignal): Promise<ParsedResponse>;
  /** Closes every idle connection. */
  close(): void;
}

const keyOf = (t: Http1Target) =>
  t.tls ? `${t.address}|${t.port}|${t.tls.serverName}|${t.tls.ca ?? ""}` : `${t.address}|${t.port}`;

export function createHttp1Client({ keep, idleMs }: Http1ClientOptions): Http1Client {
  const idle = new Map<string, Conn[]>();

  const forget = (conn: Conn) => {
    const list = idle.get(conn.data.key);
    const at = list?.indexOf(conn) ?? -1;
    if (list && at >= 0) list.splice(at, 1);
    if (list?.length === 0) idle.delete(conn.data.key);
    if (conn.data.idle) clearTimeout(conn.data.idle);
    conn.data.idle = null;
  };

  const keepIdle = (conn: Conn) => {
    const list = idle.get(conn.data.key) ?? [];
    idle.set(conn.data.key, list);
    list.push(conn);
    // An idle connection does not keep the process alive.
    conn.unref();
    conn.data.idle = setTimeout(() => {
      forget(conn);
      conn.end();
    }, idleMs);
    conn.data.idle.unref();
  };

  /** Ends the exchange: the connection goes back to the idle ones when its answer allows. */
  const finish = (conn: Conn, exchange: Exchange, response: ParsedResponse) => {
    conn.data.exchange = null;
    if (response.reusable && !conn.data.closed) keepIdle(conn);
    else conn.end();
    exchange.resolve(response);
  };

  const fail = (conn: Conn, error: Error) => {
    const exchange = conn.data.exchange;
    if (!exchange) return;
    conn.data.exchange = null;
    exchange.reject(
      exchange.reused && !exchange.parser.started() ? new StaleConnectionError(error.message) : error,
    );
  };

  const write = (conn: Conn, exchange: Exchange) => {
    const bytes = exchange.unsent;
    if (!bytes) return;
    const written = conn.write(bytes);
    exchange.unsent = written < bytes.length ? bytes.subarray(Math.max(0, written)) : null;
  };

  const handlers = {
    data(conn: Conn, bytes: Buffer) {
      const exchange = conn.data.exchange;
      if (!exchange) {
        // An idle connection that speaks unasked is not one to trust with the next request.
        forget(conn);
        conn.end();
        return;
      }
      let response: ParsedResponse | null;
      try {
        response = exchange.parser.feed(bytes);
      } catch (error) {
        fail(conn, error as Error);
        conn.end();
        return;
      }
      if (response) finish(conn, exchange, response);
    },
    drain(conn: Conn) {
      const exchange = conn.data.exchange;
      if (exchange) write(conn, exchange);
    },
    close(conn: Conn, error?: Error) {
      conn.data.closed = true;
      forget(conn);
      const exchange = conn.data.exchange;
      if (!exchange) return;
      try {
        finish(conn, exchange, exchange.parser.end());
      } catch (ended) {
        fail(conn, error ?? (ended as Error));
      }
    },
    error(conn: Conn, error: Error) {
      fail(conn, error);
    },
    handshake(conn: Conn, success: boolean, authorizationError: Error | null) {
      if (success) return;
      fail(conn, authorizationError ?? new Error("TLS handshake failed"));
      conn.end();
    },
    connectError(_conn: Conn, _error: Error) {
      // Reported through the promise Bun.connect returns.
    },
  };

  const connect = (target: Http1Target, key: string) =>
    Bun.connect<Connection>({
      hostname: target.address,
      port: target.port,
      tls: target.tls
        ? { serverName: target.tls.serverName, ...(target.tls.ca ? { ca: target.tls.ca } : {}) }
        : undefined,
      socket: handlers,
      data: { key, exchange: null, idle: null, closed: false },
    });

  /** The request over `conn`; rejects when the signal aborts it. */
  const exchangeOver = (conn: Conn, request: Uint8Array, signal: AbortSignal, reused: boolean) =>
    new Promise<ParsedResponse>((resolve, reject) => {
      if (signal.aborted) {
        keepIdle(conn);
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        fail(conn, signal.reason as Error);
        conn.terminate();
      };
      const exchange: Exchange = {
        parser: createResponseParser(keep),
        resolve: (response) => {
          signal.removeEventListener("abort", onAbort);
          resolve(response);
        },
        reject: (error) => {
          signal.removeEventListener("abort", onAbort);
          reject(error);
        },
        unsent: request,
        reused,
      };
      conn.data.exchange = exchange;
      signal.addEventListener("abort", onAbort, { once: true });
      write(conn, exchange);
    });

  /** A new connection, unless the signal aborts first (a connection made after that is closed). */
  const open = async (target: Http1Target, key: string, signal: AbortSignal): Promise<Conn> => {
    signal.throwIfAborted();
    let onAbort: () => void = () => undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
    });
    const connecting = connect(target, key);
    try {
      return await Promise.race([connecting, aborted]);
    } catch (error) {
      connecting.then((conn) => conn.end()).catch(() => undefined);
      throw error;
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  };

  return {
    async send(target, request, signal) {
      const key = keyOf(target);
      const kept = idle.get(key)?.pop();
      if (kept) {
        forget(kept);
        kept.ref();
        try {
          return await exchangeOver(kept, request, signal, true);
        } catch (error) {
          if (!(error instanceof StaleConnectionError) || signal.aborted) throw error;
        }
      }
      return exchangeOver(await open(target, key, signal), request, signal, false);
    },
    close() {
      for (const conn of [...idle.values()].flat()) {
        forget(conn);
        conn.end();
      }
    },
  };
}
