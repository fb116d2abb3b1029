/** The HTTP/1.1 response parser: framing, interim answers, limits, fed whole or a byte at a time. */
import { describe, expect, test } from "bun:test";
import {
  createResponseParser,
  DRAIN_BYTES,
  MAX_HEAD_BYTES,
  type ParsedResponse,
  ResponseParseError,
} from "../../dispatcher/http1/response-parser.ts";

const KEEP = 16;

/** Feeds `raw` in pieces of `step` bytes; returns the response and the bytes fed until it completed. */
function parse(raw: string | Buffer, step = Number.POSITIVE_INFINITY, close = false) {
  const parser = createResponseParser(KEEP);
  const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw, "latin1");
  for (let at = 0; at < bytes.length; at += step) {
    const done = parser.feed(bytes.subarray(at, Math.min(bytes.length, at + step)));
    if (done) return { response: done, fed: Math.min(bytes.length, at + step) };
  }
  if (close) return { response: parser.end(), fed: bytes.length };
  return { response: null, fed: bytes.length };
}

const text = (r: ParsedResponse | null) => Buffer.from(r?.body ?? []).toString();

describe("framing", () => {
  const cases: [string, string, { status: number; body: string; reusable: boolean }][] = [
    [
      "Content-Length",
      "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello",
      { status: 200, body: "hello", reusable: true },
    ],
    [
      "chunked, with extensions and trailers",
      "HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\nA\r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\n",
      { status: 202, body: "abc0123456789", reusable: true },
    ],
    ["no body: 204", "HTTP/1.1 204 No Content\r\n\r\n", { status: 204, body: "", reusable: true }],
    [
      "interim 100 and 103 answers skipped",
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok",
      { status: 201, body: "ok", reusable: true },
    ],
    [
      "Connection: close",
      "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
      { status: 200, body: "ok", reusable: false },
    ],
    [
      "HTTP/1.0 without keep-alive",
      "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
      { status: 200, body: "ok", reusable: false },
    ],
    [
      "a body longer than what is kept",
      "HTTP/1.1 500 Oops\r\ncontent-length: 26\r\n\r\nabcdefghijklmnopqrstuvwxyz",
      { status: 500, body: "abcdefghijklmnop", reusable: true },
    ],
    [
      "a status line without a reason",
      "HTTP/1.1 410\r\ncontent-length: 0\r\n\r\n",
      { status: 410, body: "", reusable: true },
    ],
  ];
  for (const [what, raw, expected] of cases) {
    for (const step of [Number.POSITIVE_INFINITY, 1, 7]) {
      test(`${what}, fed ${step === 1 ? "a byte at a time" : step === 7 ? "7 bytes at a time" : "whole"}`, () => {
        const { response, fed } = parse(raw, step);
        expect(response).toMatchObject({ status: expected.status, reusable: expected.reusable });
        expect(text(response)).toBe(expected.body);
        expect(fed).toBe(raw.length);
      });
    }
  }

  test("without a length, the body runs to the connection's end, and the connection is not reused", () => {
    const { response } = parse("HTTP/1.1 200 OK\r\n\r\nuntil the end", 4, true);
    expect(response).toMatchObject({ status: 200, reusable: false });
    expect(text(response)).toBe("until the end");
  });

  test("headers keep their order, names in lower case", () => {
    const { response } = parse(
      "HTTP/1.1 429 Slow Down\r\nRetry-After: 7\r\nX-A: 1\r\nX-A: 2\r\ncontent-length: 0\r\n\r\n",
    );
    expect(response?.headers).toEqual([
      ["retry-after", "7"],
      ["x-a", "1"],
      ["x-a", "2"],
      ["content-length", "0"],
    ]);
  });

  test("a body far longer than what is kept completes early, and the connection is not reused", () => {
    const length = KEEP + 4 * DRAIN_BYTES;
    const head = `HTTP/1.1 200 OK\r\ncontent-length: ${length}\r\n\r\n`;
    const { response, fed } = parse(Buffer.concat([Buffer.from(head), Buffer.alloc(length, "x")]), 4096);
    expect(response).toMatchObject({ status: 200, reusable: false });
    expect(text(response)).toBe("x".repeat(KEEP));
    expect(fed).toBeLessThan(head.length + length);
  });

  test("bytes after the response make the connection one not to reuse", () => {
    const { response } = parse("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n");
    expect(response).toMatchObject({ status: 200, reusable: false });
  });

  test("an incomplete response at the connection's end is an error", () => {
    expect(() => parse("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort", 100, true)).toThrow(
      "the connection closed before the response was complete",
    );
    expect(() => parse("", 1, true)).toThrow("the connection closed without a response");
  });
});

describe("malformed answers", () => {
  const cases: [string, string | Buffer, string][] = [
    ["not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP/1.x response"],
    ["HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "not an HTTP/1.x response"],
    ["a header without a colon", "HTTP/1.1 200 OK\r\nbroken\r\n\r\n", "malformed response header"],
    ["a folded header", "HTTP/1.1 200 OK\r\nx-a: 1\r\n  more\r\n\r\n", "malformed response header"],
    [
      "two lengths",
      "HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n",
      "invalid Content-Length",
    ],
    ["a negative length", "HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n", "invalid Content-Length"],
    [
      "a bad chunk size",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
      "malformed chunk size",
    ],
    [
      "a chunk without its line end",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\nab\r\n",
      "malformed chunked body",
    ],
    [
      "an endless head",
      Buffer.from(`HTTP/1.1 200 OK\r\nx: ${"a".repeat(MAX_HEAD_BYTES)}`),
      "response head too large",
    ],
  ];
  for (const [what, raw, message] of cases) {
    test(`${what}: ResponseParseError`, () => {
      let thrown: unknown;
      try {
        parse(raw);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ResponseParseError);
      expect((thrown as Error).message).toContain(message);
    });
  }
});
