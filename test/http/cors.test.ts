/**
 * CORS as a browser sees it: preflights (OPTIONS with Origin and Access-Control-Request-*) and the
 * headers on ordinary answers, errors included, for an allowed origin, another origin, and the
 * default policy (no cross-origin access). The pure rules are tested by table first.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadApiConfig } from "../../api/config.ts";
import {
  ALLOWED_REQUEST_HEADERS,
  answerPreflight,
  corsPolicy,
  corsResponseHeaders,
  EXPOSED_HEADERS,
} from "../../api/http/cors.ts";
import { createTestApp, type TestApp } from "../support/app.ts";

const APP = "https://app.example.com";
const OTHER = "https://evil.example.net";

describe("the CORS rules", () => {
  const policy = corsPolicy([APP]);
  const methods = ["GET", "HEAD", "OPTIONS", "POST"];
  const table: [string, Parameters<typeof answerPreflight>[1], boolean | string][] = [
    [
      "allowed origin, method and headers",
      { origin: APP, method: "POST", headers: "Authorization, Content-Type" },
      true,
    ],
    ["method in lower case", { origin: APP, method: "post", headers: null }, true],
    ["another origin", { origin: OTHER, method: "POST", headers: null }, "origin"],
    ["a method the path lacks", { origin: APP, method: "DELETE", headers: null }, "method"],
    ["a header not allowed", { origin: APP, method: "POST", headers: "authorization, x-secret" }, "headers"],
  ];
  for (const [name, preflight, expected] of table) {
    test(name, () => {
      const answer = answerPreflight(policy, preflight, methods);
      if (expected === true) expect(answer.allowed).toBe(true);
      else expect(answer).toMatchObject({ allowed: false, reason: expected });
    });
  }

  test("no origins configured: no headers at all; any origin with *", () => {
    expect(corsResponseHeaders(corsPolicy([]), APP)).toEqual({});
    expect(corsResponseHeaders(corsPolicy(["*"]), OTHER)["access-control-allow-origin"]).toBe(OTHER);
    expect(corsResponseHeaders(policy, OTHER)).toEqual({ vary: "Origin" });
  });

  test("CORS_ORIGINS is a list of exact origins or *", () => {
    const base = { REDIS_URL: "redis://127.0.0.1:6379" };
    expect(loadApiConfig(base).CORS_ORIGINS).toEqual([]);
    expect(loadApiConfig({ ...base, CORS_ORIGINS: `${APP}, http://localhost:5173` }).CORS_ORIGINS).toEqual([
      APP,
      "http://localhost:5173",
    ]);
    for (const bad of [
      "https://app.example.com/",
      "app.example.com",
      "ftp://x.example",
      "https://a.example/path",
    ]) {
      expect(() => loadApiConfig({ ...base, CORS_ORIGINS: bad })).toThrow(/CORS_ORIGINS/);
    }
  });
});

describe("CORS over HTTP with CORS_ORIGINS set", () => {
  let t: TestApp;
  let token = "";
  beforeAll(async () => {
    t = await createTestApp({ CORS_ORIGINS: `${APP},http://localhost:5173` });
    token = (await t.provision("cors")).adminToken;
  });
  afterAll(() => t.close());

  const preflight = (path: string, origin: string, method: string, headers?: string) =>
    t.call("OPTIONS", path, {
      headers: {
        origin,
        "access-control-request-method": method,
        ...(headers ? { "access-control-request-headers": headers } : {}),
      },
    });

  test("a preflight from an allowed origin: 204 with the allow headers, Vary and Max-Age", async () => {
    const answer = await preflight("/graphql/graphql", APP, "POST", "authorization,content-type");
    expect(answer.status).toBe(204);
    expect(answer.body).toBe("");
    expect(answer.headers.get("access-control-allow-origin")).toBe(APP);
    expect(answer.headers.get("access-control-allow-methods")).toBe("GET, HEAD, OPTIONS, POST");
    const allowedHeaders = answer.headers.get("access-control-allow-headers")?.split(", ") ?? [];
    expect(allowedHeaders).toEqual(expect.arrayContaining(["authorization", "content-type"]));
    expect(answer.headers.get("access-control-max-age")).toBe("600");
    expect(answer.headers.get("vary")).toContain("Origin");
    expect(answer.headers.get("access-control-allow-credentials")).toBeNull();
  });

  test("a preflight for a path with parameters lists that path's methods", async () => {
    const answer = await preflight("/webhooks/some-id", "http://localhost:5173", "PUT", "authorization");
    expect(answer.status).toBe(204);
    expect(answer.headers.get("access-control-allow-methods")).toBe("DELETE, GET, HEAD, OPTIONS, PUT");
  });

  test("a preflight from another origin is refused (403, no allow headers)", async () => {
    const answer = await preflight("/graphql/graphql", OTHER, "POST", "authorization");
    expect(answer.status).toBe(403);
    expect(answer.body.errorType).toBe("insufficient_access");
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
    expect(answer.headers.get("access-control-allow-methods")).toBeNull();
  });

  test("a preflight for a method the path lacks: 405 with Allow; for a header not allowed: 403", async () => {
    const method = await preflight("/graphql/graphql", APP, "DELETE");
    expect(method.status).toBe(405);
    expect(method.headers.get("allow")).toBe("GET, HEAD, OPTIONS, POST");
    const header = await preflight("/graphql/graphql", APP, "POST", "authorization, x-forwarded-host");
    expect(header.status).toBe(403);
    expect(header.body.message).toContain("x-forwarded-host");
  });

  test("a preflight for no such path: 404 in the error shape", async () => {
    const answer = await preflight("/nothing/here", APP, "GET");
    expect(answer.status).toBe(404);
    expect(answer.body.errorType).toBe("not_found");
  });

  test("an answer to an allowed origin exposes the rate-limit, retry, request-id and ETag headers", async () => {
    const answer = await t.call("GET", "/graphql/schema", { token, headers: { origin: APP } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBe(APP);
    expect(answer.headers.get("vary")).toContain("Origin");
    const exposed = answer.headers.get("access-control-expose-headers")?.split(", ") ?? [];
    for (const name of [
      "RateLimit-Limit",
      "RateLimit-Remaining",
      "RateLimit-Reset",
      "Retry-After",
      "X-Request-Id",
      "ETag",
    ]) {
      expect(exposed).toContain(name);
    }
    expect(answer.headers.get("ratelimit-limit")).not.toBeNull();
  });

  test("errors carry the CORS headers too (a 401, a 404, a GraphQL answer built as text)", async () => {
    const unauthorized = await t.call("GET", "/auth/whoami", { headers: { origin: APP } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("access-control-allow-origin")).toBe(APP);
    const missing = await t.call("GET", "/nothing", { headers: { origin: APP } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("access-control-allow-origin")).toBe(APP);
    const graphql = await t.call("POST", "/graphql/graphql", {
      token,
      headers: { origin: APP },
      body: { query: "{ __typename }" },
    });
    expect(graphql.headers.get("access-control-allow-origin")).toBe(APP);
  });

  test("another origin's request gets Vary: Origin and no allow-origin", async () => {
    const answer = await t.call("GET", "/auth/whoami", { token, headers: { origin: OTHER } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
    expect(answer.headers.get("vary")).toBe("Origin");
  });

  test("a plain OPTIONS (no preflight) answers 204 with Allow", async () => {
    const answer = await t.call("OPTIONS", "/auth/token");
    expect(answer.status).toBe(204);
    expect(answer.headers.get("allow")).toBe("OPTIONS, POST");
  });

  test("the allowed request headers and exposed headers are the documented lists", () => {
    expect(ALLOWED_REQUEST_HEADERS).toContain("authorization");
    expect(EXPOSED_HEADERS).toEqual(expect.arrayContaining(["Retry-After", "X-Request-Id", "ETag"]));
  });
});

describe("CORS by default (CORS_ORIGINS unset)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  test("no origin may call: preflights are refused and answers carry no CORS headers", async () => {
    const answer = await t.call("OPTIONS", "/graphql/graphql", {
      headers: { origin: APP, "access-control-request-method": "POST" },
    });
    expect(answer.status).toBe(403);
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
    const health = await t.call("GET", "/health", { headers: { origin: APP } });
    expect(health.headers.get("access-control-allow-origin")).toBeNull();
    expect(health.headers.get("vary")).toBeNull();
  });
});
