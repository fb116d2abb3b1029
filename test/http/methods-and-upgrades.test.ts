/**
 * What the router alone would answer 404 or run as a plain GET: a known path with the wrong method
 * (405 with Allow), and a WebSocket upgrade asked of a route that is not a WebSocket endpoint
 * (refused with 400 in the error shape, never run as a request).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { methodsAt, pathMatches, takesWebSocket } from "../../api/http/route-table.ts";
import { serverOptions } from "../../api/http/server-options.ts";
import { createTestApp, type TestApp } from "../support/app.ts";

describe("the route table", () => {
  const routes = [
    { method: "GET", path: "/webhooks/:id" },
    { method: "PUT", path: "/webhooks/:id" },
    { method: "POST", path: "/webhooks/:id/recover" },
    { method: "WS", path: "/live" },
  ];
  test("templates match whole segments", () => {
    expect(pathMatches("/webhooks/:id", "/webhooks/abc")).toBe(true);
    expect(pathMatches("/webhooks/:id", "/webhooks/abc/")).toBe(true);
    expect(pathMatches("/webhooks/:id", "/webhooks")).toBe(false);
    expect(pathMatches("/webhooks/:id", "/webhooks/abc/recover")).toBe(false);
    expect(pathMatches("/files/*", "/files/a/b")).toBe(true);
  });
  test("methods of a path, with HEAD beside GET and OPTIONS; none for an unknown path", () => {
    expect(methodsAt(routes, "/webhooks/abc")).toEqual(["GET", "HEAD", "OPTIONS", "PUT"]);
    expect(methodsAt(routes, "/webhooks/abc/recover")).toEqual(["OPTIONS", "POST"]);
    expect(methodsAt(routes, "/nothing")).toEqual([]);
    expect(methodsAt(routes, "/live")).toEqual([]);
    expect(takesWebSocket(routes, "/live")).toBe(true);
    expect(takesWebSocket(routes, "/webhooks/abc")).toBe(false);
  });
});

describe("wrong methods and refused upgrades over HTTP", () => {
  let t: TestApp;
  let token = "";
  beforeAll(async () => {
    t = await createTestApp();
    token = (await t.provision("methods")).adminToken;
  });
  afterAll(() => t.close());

  const cases: [string, string, string][] = [
    ["PUT", "/graphql/graphql", "GET, HEAD, OPTIONS, POST"],
    ["DELETE", "/graphql/graphql", "GET, HEAD, OPTIONS, POST"],
    ["PATCH", "/webhooks/abc", "DELETE, GET, HEAD, OPTIONS, PUT"],
    ["POST", "/health", "GET, HEAD, OPTIONS"],
    ["GET", "/auth/token", "OPTIONS, POST"],
  ];
  for (const [method, path, allow] of cases) {
    test(`${method} ${path} → 405 with Allow: ${allow}`, async () => {
      const answer = await t.call(method, path, { token });
      expect(answer.status).toBe(405);
      expect(answer.headers.get("allow")).toBe(allow);
      expect(answer.body).toEqual({
        errorType: "method_not_allowed",
        message: `${method} is not a method of this path`,
      });
    });
  }

  test("an unknown path is still 404", async () => {
    const answer = await t.call("PUT", "/no/such/path", { token });
    expect(answer.status).toBe(404);
    expect(answer.body.errorType).toBe("not_found");
  });

  test("HEAD of a GET route answers like GET without a body", async () => {
    const answer = await t.call("HEAD", "/health");
    expect(answer.status).toBe(200);
    expect(answer.body).toBe("");
  });

  test("GET with a mutation: 405 with Allow: POST", async () => {
    const query = encodeURIComponent('mutation { schema { deleteJobs(UID: "x") } }');
    const answer = await t.call("GET", `/graphql/graphql?query=${query}`, { token });
    expect(answer.status).toBe(405);
    expect(answer.headers.get("allow")).toBe("POST");
  });

  for (const path of ["/graphql/graphql", "/health", "/auth/whoami"]) {
    test(`a WebSocket upgrade of ${path} is refused with 400, before any route runs`, async () => {
      const answer = await t.call("GET", path, {
        token,
        headers: {
          upgrade: "websocket",
          connection: "Upgrade",
          "sec-websocket-version": "13",
          "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
        },
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        errorType: "bad_request",
        message: `${path} is not a WebSocket endpoint: the upgrade is refused`,
      });
    });
  }

  test("a real WebSocket client is refused at once and never opens", async () => {
    t.app.listen(serverOptions({ ...t.config, PORT: 0, HOST: "127.0.0.1" }));
    const port = t.app.server?.port ?? 0;
    const started = performance.now();
    const outcome = await new Promise<string>((resolve) => {
      const socket = new WebSocket(`ws://127.0.0.1:${port}/graphql/graphql`);
      socket.onopen = () => resolve("open");
      socket.onerror = () => resolve("error");
      socket.onclose = () => resolve("close");
    });
    expect(outcome).not.toBe("open");
    expect(performance.now() - started).toBeLessThan(2000);
    await t.app.stop(true);
  });
});
