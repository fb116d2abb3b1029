import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { errorResponse, STATUS_BY_CODE } from "../../api/http/error-response.ts";
import * as errors from "../../common/errors.ts";
import { createLogger } from "../../common/log.ts";
import { freePort } from "../../scripts/private-redis.ts";
import { createTestApp, type TestApp } from "../support/app.ts";

describe("error → HTTP answer", () => {
  const silent = createLogger("silent");
  const table: [errors.AppError, number][] = [
    [new errors.UnauthorizedError("x"), 401],
    [new errors.InsufficientAccessError("x"), 403],
    [new errors.NotFoundError("x"), 404],
    [new errors.BadRequestError("x"), 400],
    [new errors.ValidationError("x", [{ path: "a", message: "b" }]), 400],
    [new errors.ConflictError("x"), 409],
    [new errors.PayloadTooLargeError("x"), 413],
    [new errors.RateLimitedError("x", 7), 429],
    [new errors.UnavailableError("x"), 503],
  ];
  for (const [error, status] of table) {
    test(`${error.code} → ${status}`, async () => {
      const response = errorResponse(error, silent);
      expect(response.status).toBe(status);
      expect(STATUS_BY_CODE[error.code]).toBe(status);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body.errorType).toBe(error.code);
      expect(body.message).toBe("x");
    });
  }

  test("validation details and Retry-After are carried", async () => {
    const validation = (await errorResponse(
      new errors.ValidationError("x", [{ path: "a", message: "b" }]),
      silent,
    ).json()) as Record<string, unknown>;
    expect(validation.details).toEqual([{ path: "a", message: "b" }]);
    expect(errorResponse(new errors.RateLimitedError("x", 7), silent).headers.get("retry-after")).toBe("7");
  });

  test("unknown errors are masked, logged with an id, and answered 500", async () => {
    const lines: string[] = [];
    const log = createLogger("error", {}, (line) => lines.push(line));
    const response = errorResponse(new Error("SELECT secret FROM tokens"), log);
    expect(response.status).toBe(500);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toEqual({ errorType: "internal", message: "internal error", errorId: expect.any(String) });
    expect(lines.length).toBe(1);
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({
      errorId: body.errorId,
      error: "SELECT secret FROM tokens",
    });
  });
});

describe("HTTP edges", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ MAX_BODY_BYTES: "1024" });
  });
  afterAll(() => t.close());

  test("unknown paths answer 404 not_found", async () => {
    const { status, body } = await t.call("GET", "/no/such/thing");
    expect(status).toBe(404);
    expect(body.errorType).toBe("not_found");
  });

  test("bodies over the limit answer 413 before anything runs", async () => {
    const { adminToken } = await t.provision("big");
    const { status, body } = await t.call("POST", "/auth/token", {
      token: adminToken,
      rawBody: `"${"x".repeat(2000)}"`,
    });
    expect(status).toBe(413);
    expect(body.errorType).toBe("payload_too_large");
    expect((await t.call("GET", "/auth/tokens", { token: adminToken })).body.result.length).toBe(1);
  });

  /** A POST of `text` to /graphql/graphql, with its length declared or sent chunked (no length). */
  const postBody = async (text: string, declared: boolean) => {
    const { adminToken } = await t.provision(`body-${crypto.randomUUID().slice(0, 8)}`);
    const bytes = new TextEncoder().encode(text);
    const headers: Record<string, string> = {
      authorization: `Bearer ${adminToken}`,
      "content-type": "application/json",
    };
    if (declared) headers["content-length"] = String(bytes.length);
    const body = declared
      ? bytes
      : new ReadableStream({
          start(controller) {
            controller.enqueue(bytes);
            controller.close();
          },
        });
    const response = await t.app.handle(
      new Request("http://test.local/graphql/graphql", { method: "POST", headers, body }),
    );
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  for (const declared of [true, false]) {
    const how = declared ? "with its length declared" : "sent chunked";
    test(`a body that is not JSON answers 400 bad_request, ${how}`, async () => {
      const { status, body } = await postBody('{"query": "{ __typename }"', declared);
      expect(status).toBe(400);
      expect(body).toEqual({ errorType: "bad_request", message: "the request body is not valid JSON" });
    });

    test(`a JSON body is read, ${how}`, async () => {
      const { status, body } = await postBody('{"query": "{ __typename }"}', declared);
      expect(status).toBe(200);
      expect(body).toEqual({ data: { __typename: "Query" } });
    });
  }

  test("a chunked body over the limit answers 413", async () => {
    const { status, body } = await postBody(`{"query": "${"x".repeat(2000)}"}`, false);
    expect(status).toBe(413);
    expect(body.errorType).toBe("payload_too_large");
  });

  test("/health reports store and Redis reachable, without auth or secrets", async () => {
    const { status, body } = await t.call("GET", "/health");
    expect(status).toBe(200);
    expect(body).toEqual({ status: "ok", store: "ok", redis: "ok" });
  });

  test("a store failure answers an opaque 500 with an error id", async () => {
    const other = await createTestApp();
    const { adminToken } = await other.provision("doomed");
    await other.store.close();
    const { status, body } = await other.call("GET", "/auth/whoami", { token: adminToken });
    expect(status).toBe(500);
    expect(body).toEqual({ errorType: "internal", message: "internal error", errorId: expect.any(String) });
    await other.redis.close();
  });
});

describe("/health when Redis is unreachable", () => {
  test("answers 503 and says which part is down", async () => {
    const t = await createTestApp({ REDIS_URL: `redis://127.0.0.1:${freePort()}` });
    try {
      const { status, body } = await t.call("GET", "/health");
      expect(status).toBe(503);
      expect(body).toEqual({ status: "degraded", store: "ok", redis: "down" });
    } finally {
      await t.close();
    }
  });
});
