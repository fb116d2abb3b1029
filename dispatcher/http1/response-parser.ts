/**
 * Reads one HTTP/1.1 response from the bytes a connection delivers, as they
 * come: the status, the headers, and the first `keep` bytes of the body (the
 * delivery log's share). Pure. Framing by Content-Length, chunked transfer
 * coding or the connection's end; interim 1xx answers are skipped. A body much
 * longer than what is kept is not read to its end: the response counts as
 * complete, and the connection is not reused. Malformed answers throw
 * ResponseParseError.
 */

/** A receiver's answer, as far as a delivery needs it. */
export interface ParsedResponse {
  status: number;
  /** Header names in lower case, in the order received. */
  headers: [string, string][];
  /** The first `keep` bytes of the body. */
  body: Uint8Array;
  /** The connection may carry another request. */
  reusable: boolean;
}

export class ResponseParseError extends Error {
  override name = "ResponseParseError";
}

export interface ResponseParser {
  /** Takes the next bytes; returns the response once it is complete. */
  feed(bytes: Uint8Array): ParsedResponse | null;
  /** The connection ended: the response, when what arrived makes one. */
  end(): ParsedResponse;
  /** Whether any byte has arrived. */
  started(): boolean;
}

/** Longest status line and headers accepted. */
export const MAX_HEAD_BYTES = 64 * 1024;
/** Body bytes read past the kept ones to reuse the connection; a longer body closes it instead. */
export const DRAIN_BYTES = 64 * 1024;

const CRLF = Buffer.from("\r\n");
const HEAD_END = Buffer.from("\r\n\r\n");

type Framing =
  | { kind: "length"; left: number }
  | { kind: "chunked"; left: number; step: "size" | "data" | "data-end" | "trailers" }
  | { kind: "close" };

export function createResponseParser(keep: number): ResponseParser {
  let pending: Buffer = Buffer.alloc(0);
  let startedAt = false;
  let status = 0;
  let headers: [string, string][] = [];
  let reusable = false;
  let framing: Framing | null = null;
  const kept: Uint8Array[] = [];
  let keptBytes = 0;
  let bodyBytes = 0;

  const response = (reuse: boolean): ParsedResponse => ({
    status,
    headers,
    body: kept.length === 1 ? (kept[0] as Uint8Array) : Buffer.concat(kept),
    reusable: reuse && reusable,
  });

  /** Counts body bytes, keeping the first `keep`; false once the body is too long to drain. */
  const take = (bytes: Uint8Array): boolean => {
    if (keptBytes < keep) {
      const part = bytes.subarray(0, keep - keptBytes);
      kept.push(part);
      keptBytes += part.length;
    }
    bodyBytes += bytes.length;
    return bodyBytes <= keep + DRAIN_BYTES;
  };

  /** Parses a complete head; false for an interim (1xx) answer, which is skipped. */
  const readHead = (head: string): boolean => {
    const lines = head.split("\r\n");
    const statusLine = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: .*)?$/.exec(lines[0] ?? "");
    if (!statusLine) throw new ResponseParseError("the answer is not an HTTP/1.x response");
    status = Number(statusLine[2]);
    headers = [];
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      if (colon <= 0 || /^[ \t]/.test(line)) throw new ResponseParseError("malformed response header");
      headers.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]);
    }
    if (status < 200 && status !== 101) return false;
    const value = (name: string) => headers.filter(([n]) => n === name).map(([, v]) => v.toLowerCase());
    const connection = value("connection").join(",");
    reusable = statusLine[1] === "1" ? !connection.includes("close") : connection.includes("keep-alive");
    const lengths = new Set(value("content-length").flatMap((v) => v.split(",").map((l) => l.trim())));
    if (status === 204 || status === 304 || status === 101) framing = { kind: "length", left: 0 };
    else if (value("transfer-encoding").some((v) => v.includes("chunked")))
      framing = { kind: "chunked", left: 0, step: "size" };
    else if (lengths.size > 0) {
      const [length] = lengths;
      if (lengths.size > 1 || !/^\d{1,15}$/.test(length ?? ""))
        throw new ResponseParseError("invalid Content-Length");
      framing = { kind: "length", left: Number(length) };
    } else {
      framing = { kind: "close" };
      reusable = false;
    }
    if (status === 101) reusable = false;
    return true;
  };

  /** Reads body bytes from `pending`; true once the body is complete (or too long to finish). */
  const readBody = (f: Framing): boolean => {
    if (f.kind === "close") {
      const more = take(pending);
      pending = Buffer.alloc(0);
      if (!more) reusable = false;
      return !more;
    }
    if (f.kind === "length") {
      const part = pending.subarray(0, f.left);
      pending = pending.subarray(part.length);
      f.left -= part.length;
      if (!take(part)) {
        reusable = false;
        return true;
      }
      return f.left === 0;
    }
    for (;;) {
      if (f.step === "data") {
        const part = pending.subarray(0, f.left);
        pending = pending.subarray(part.length);
        f.left -= part.length;
        if (!take(part)) {
          reusable = false;
          return true;
        }
        if (f.left > 0) return false;
        f.step = "data-end";
        continue;
      }
      const eol = pending.indexOf(CRLF);
      if (eol < 0) {
        if (pending.length > MAX_HEAD_BYTES) throw new ResponseParseError("malformed chunked body");
        return false;
      }
      const line = pending.subarray(0, eol).toString("latin1");
      pending = pending.subarray(eol + 2);
      if (f.step === "data-end") {
        if (line !== "") throw new ResponseParseError("malformed chunked body");
        f.step = "size";
      } else if (f.step === "size") {
        const size = /^([0-9a-fA-F]{1,12})[ \t]*(;.*)?$/.exec(line)?.[1];
        if (size === undefined) throw new ResponseParseError("malformed chunk size");
        f.left = Number.parseInt(size, 16);
        f.step = f.left === 0 ? "trailers" : "data";
      } else if (line === "") return true;
    }
  };

  return {
    started: () => startedAt,
    feed(bytes) {
      startedAt = true;
      pending = pending.length === 0 ? Buffer.from(bytes) : Buffer.concat([pending, bytes]);
      while (!framing) {
        const end = pending.indexOf(HEAD_END);
        if (end < 0) {
          if (pending.length > MAX_HEAD_BYTES) throw new ResponseParseError("response head too large");
          return null;
        }
        if (end > MAX_HEAD_BYTES) throw new ResponseParseError("response head too large");
        const head = pending.subarray(0, end).toString("latin1");
        pending = pending.subarray(end + 4);
        readHead(head);
      }
      if (!readBody(framing)) return null;
      // Bytes after the response on a connection with no request outstanding: not one to reuse.
      return response(pending.length === 0);
    },
    end() {
      if (framing?.kind === "close") return response(false);
      throw new ResponseParseError(
        startedAt
          ? "the connection closed before the response was complete"
          : "the connection closed without a response",
      );
    },
  };
}
