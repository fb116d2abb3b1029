import { describe, expect, test } from "bun:test";
import {
  classifyResponse,
  parseRetryAfter,
  type ResponseClass,
  type SendError,
} from "../../dispatcher/classify-response.ts";

const NOW = Date.parse("2026-01-01T00:00:00Z");
const context = { now: NOW, maxRetryAfterMs: 3_600_000 };
const classify = (
  status: number | null,
  headers: Record<string, string> = {},
  error: SendError | null = null,
) => classifyResponse(status, new Headers(headers), error, context);

type Case = [string, number | null, Record<string, string>, SendError | null, ResponseClass];

const CASES: Case[] = [
  ["200 OK", 200, {}, null, { kind: "delivered" }],
  ["201 Created", 201, {}, null, { kind: "delivered" }],
  ["204 No Content", 204, {}, null, { kind: "delivered" }],
  ["299", 299, {}, null, { kind: "delivered" }],
  [
    "301 redirect",
    301,
    { location: "https://elsewhere.example/" },
    null,
    { kind: "retry", reason: "HTTP 301: redirect not followed (to https://elsewhere.example/)" },
  ],
  ["302 redirect", 302, {}, null, { kind: "retry", reason: "HTTP 302: redirect not followed" }],
  ["307 redirect", 307, {}, null, { kind: "retry", reason: "HTTP 307: redirect not followed" }],
  ["308 redirect", 308, {}, null, { kind: "retry", reason: "HTTP 308: redirect not followed" }],
  ["304", 304, {}, null, { kind: "retry", reason: "HTTP 304: redirect not followed" }],
  ["400", 400, {}, null, { kind: "retry", reason: "HTTP 400" }],
  ["401", 401, {}, null, { kind: "retry", reason: "HTTP 401" }],
  ["403", 403, {}, null, { kind: "retry", reason: "HTTP 403" }],
  ["404", 404, {}, null, { kind: "retry", reason: "HTTP 404" }],
  ["408", 408, {}, null, { kind: "retry", reason: "HTTP 408" }],
  [
    "410 Gone",
    410,
    {},
    null,
    { kind: "disable-endpoint", reason: "HTTP 410 Gone: the endpoint asked to stop" },
  ],
  ["413", 413, {}, null, { kind: "retry", reason: "HTTP 413" }],
  ["429 without Retry-After", 429, {}, null, { kind: "retry", reason: "HTTP 429" }],
  [
    "429 Retry-After seconds",
    429,
    { "retry-after": "120" },
    null,
    { kind: "retry-after", delayMs: 120_000, reason: "HTTP 429 with Retry-After" },
  ],
  [
    "429 Retry-After 0",
    429,
    { "retry-after": "0" },
    null,
    { kind: "retry-after", delayMs: 0, reason: "HTTP 429 with Retry-After" },
  ],
  [
    "429 Retry-After beyond the bound",
    429,
    { "retry-after": "86400" },
    null,
    { kind: "retry-after", delayMs: 3_600_000, reason: "HTTP 429 with Retry-After" },
  ],
  [
    "503 Retry-After HTTP-date",
    503,
    { "retry-after": "Thu, 01 Jan 2026 00:00:30 GMT" },
    null,
    { kind: "retry-after", delayMs: 30_000, reason: "HTTP 503 with Retry-After" },
  ],
  [
    "503 Retry-After past date",
    503,
    { "retry-after": "Wed, 31 Dec 2025 23:00:00 GMT" },
    null,
    { kind: "retry-after", delayMs: 0, reason: "HTTP 503 with Retry-After" },
  ],
  ["503 Retry-After garbage", 503, { "retry-after": "soon" }, null, { kind: "retry", reason: "HTTP 503" }],
  ["500 ignores Retry-After", 500, { "retry-after": "5" }, null, { kind: "retry", reason: "HTTP 500" }],
  ["502", 502, {}, null, { kind: "retry", reason: "HTTP 502" }],
  ["504", 504, {}, null, { kind: "retry", reason: "HTTP 504" }],
  ["599", 599, {}, null, { kind: "retry", reason: "HTTP 599" }],
  ["100 (never final)", 100, {}, null, { kind: "retry", reason: "HTTP 100" }],
  [
    "timeout",
    null,
    {},
    { kind: "timeout", message: "no answer within 25000 ms" },
    { kind: "retry", reason: "no answer within 25000 ms" },
  ],
  [
    "connection refused",
    null,
    {},
    { kind: "connection", message: "ECONNREFUSED" },
    { kind: "retry", reason: "ECONNREFUSED" },
  ],
  [
    "DNS failure",
    null,
    {},
    { kind: "dns", message: "cannot resolve x.invalid" },
    { kind: "retry", reason: "cannot resolve x.invalid" },
  ],
  [
    "refused by the SSRF guard",
    null,
    {},
    { kind: "refused", message: "destination refused" },
    { kind: "give-up", reason: "destination refused" },
  ],
  ["no status, no error", null, {}, null, { kind: "retry", reason: "no response" }],
];

describe("classifyResponse", () => {
  test.each(CASES)("%s", (_, status, headers, error, expected) => {
    expect(classify(status, headers, error)).toEqual(expected);
  });
});

describe("parseRetryAfter", () => {
  test.each([
    ["30", 30_000],
    [" 7 ", 7000],
    ["Thu, 01 Jan 2026 00:01:00 GMT", 60_000],
    ["Thursday, 01-Jan-26 00:01:00 GMT", 60_000],
    ["Thu Jan  1 00:01:00 2026", 60_000],
    ["-5", null],
    ["1.5", null],
    ["5 min", null],
    ["", null],
  ] as [string, number | null][])("%p → %p", (value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });

  test("absent", () => expect(parseRetryAfter(null, NOW)).toBeNull());
});
