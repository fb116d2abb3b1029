/**
 * The OpenAPI 3.1 document at /openapi.json: valid by an independent validator, naming every REST
 * route the app registers (Elysia's own list, `app.routes`), with the request schemas the handlers
 * validate with; and its page at /openapi, whose scripts and styles come from this server only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { createTestApp, type TestApp } from "../support/app.ts";

// Routes that serve pages (the document itself, the browser console), not the API it describes.
const DOCUMENTATION_ROUTES = new Set([
  "/console",
  "/console/",
  "/console/assets/:name",
  "/openapi.json",
  "/openapi",
  "/openapi/swagger-ui-init.js",
  "/openapi/swagger-ui-bundle.js",
  "/openapi/swagger-ui.css",
]);

// biome-ignore lint/suspicious/noExplicitAny: the document is arbitrary JSON
type Doc = any;

describe("the OpenAPI document", () => {
  let t: TestApp;
  let doc: Doc;
  beforeAll(async () => {
    t = await createTestApp();
    const answer = await t.call("GET", "/openapi.json");
    expect(answer.status).toBe(200);
    doc = answer.body;
  });
  afterAll(() => t.close());

  test("is a valid OpenAPI 3.1 document", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  test("names every REST route the app registers, and nothing else", () => {
    const registered = t.app.routes
      // A WebSocket route (live subscriptions) is not a REST operation.
      .filter((route) => !DOCUMENTATION_ROUTES.has(route.path) && route.method !== "WS")
      .map((route) => `${route.method.toLowerCase()} ${route.path.replace(/:([^/]+)/g, "{$1}")}`)
      .sort();
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`))
      .sort();
    expect(registered.length).toBeGreaterThanOrEqual(30);
    expect(documented).toEqual(registered);
  });

  test("every operation has a summary, a tag and an error answer; tokens are required unless public", () => {
    for (const item of Object.values(doc.paths as Record<string, Record<string, Doc>>)) {
      for (const operation of Object.values(item)) {
        expect(operation.summary).toBeString();
        expect(operation.tags.length).toBe(1);
        expect(operation.responses.default.content["application/json"].schema.required).toEqual([
          "errorType",
          "message",
        ]);
      }
    }
    expect(doc.security).toEqual([{ bearer: [] }]);
    expect(doc.paths["/health"].get.security).toEqual([]);
  });

  test("bodies and query strings carry the schemas the handlers validate with", () => {
    const tokenBody = doc.paths["/auth/token"].post.requestBody.content["application/json"].schema;
    expect(Object.keys(tokenBody.properties).sort()).toEqual(["description", "expiry", "roles"]);
    expect(tokenBody.additionalProperties).toBe(false);
    const variable =
      doc.paths["/configuration/extension/"].post.requestBody.content["application/json"].schema;
    expect(variable.required).toContain("key");
    const deliveries = doc.paths["/webhooks/{id}/deliveries"].get.parameters;
    expect(deliveries.map((p: Doc) => `${p.in}:${p.name}`).sort()).toEqual([
      "path:id",
      "query:after",
      "query:cursor",
      "query:limit",
      "query:since",
      "query:status",
      "query:until",
    ]);
    const graphql = doc.paths["/graphql/graphql"].post.requestBody.content["application/json"].schema;
    expect(graphql.anyOf[1].maxItems).toBe(10);
  });

  test("the page loads Swagger UI from this server only, and its files are served", async () => {
    const page = await t.call("GET", "/openapi");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toStartWith("text/html");
    const sources = [...(page.body as string).matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(sources.length).toBe(3);
    for (const source of sources) {
      expect(source).toStartWith("/openapi/");
      const file = await t.app.handle(new Request(`http://test.local${source}`));
      expect(file.status).toBe(200);
      expect((await file.arrayBuffer()).byteLength).toBeGreaterThan(10);
    }
  });
});
