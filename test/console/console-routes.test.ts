/**
 * `/console` and `/console/assets/*` through the real app: the page and every file it refers to,
 * with their types and caching, without a token; and the bundle built lazily, once, in memory.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { buildConsole } from "../../api/console/build-console.ts";
import { consoleRoutes } from "../../api/console/console-routes.ts";
import { errorPlugin } from "../../api/http/error-plugin.ts";
import { createLogger } from "../../common/log.ts";
import { createTestApp, type TestApp } from "../support/app.ts";

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const get = (path: string, headers: Record<string, string> = {}) =>
  app.app.handle(new Request(`http://test.local${path}`, { headers }));
/** Every `/console/assets/<name>` a text names (the page's script and style, chunks, worker URLs). */
const assetPaths = (text: string) => [...text.matchAll(/\/console\/assets\/[\w.-]+/g)].map((m) => m[0]);

describe("the console's page", () => {
  test("is served without a token: HTML, revalidated by its ETag, locked down by its CSP", async () => {
    const answer = await get("/console");
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("text/html;charset=utf-8");
    expect(answer.headers.get("cache-control")).toBe("no-cache");
    const csp = answer.headers.get("content-security-policy") ?? "";
    for (const rule of [
      "default-src 'none'",
      "script-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
    ])
      expect(csp).toContain(rule);
    expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
    const html = await answer.text();
    expect(html).toContain('<div id="root"></div>');
    expect(assetPaths(html).length).toBe(2); // one script, one stylesheet
    expect((await get("/console/")).status).toBe(200);

    const etag = answer.headers.get("etag") ?? "";
    expect(etag).toMatch(/^"\w+"$/);
    const again = await get("/console", { "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
  });

  test("every file it refers to, down to the chunks and workers, is served with its type under a hashed name, cached for a year", async () => {
    const page = await (await get("/console")).text();
    const seen = new Set<string>();
    const queue = assetPaths(page);
    while (queue.length > 0) {
      const path = queue.pop() ?? "";
      if (seen.has(path)) continue;
      seen.add(path);
      const answer = await get(path);
      expect({ path, status: answer.status }).toEqual({ path, status: 200 });
      expect(path).toMatch(/-[a-z0-9]{8}\.(js|css)$/);
      const type = path.endsWith(".js") ? "text/javascript;charset=utf-8" : "text/css;charset=utf-8";
      expect(answer.headers.get("content-type")).toBe(type);
      expect(answer.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(answer.headers.get("etag")).toMatch(/^"\w+"$/);
      queue.push(...assetPaths(await answer.text()));
    }
    // The app's script and style, Monaco's three workers, the chunks GraphiQL loads on demand.
    const names = [...seen].map((path) => path.slice("/console/assets/".length));
    for (const worker of ["editor", "json", "graphql"])
      expect(names.some((name) => name.startsWith(`${worker}.worker-`))).toBe(true);
    expect(names.length).toBeGreaterThanOrEqual(10);
  });

  test("gzip to a browser that takes it: a third of the bytes or less, unpacking to the same file", async () => {
    const script =
      assetPaths(await (await get("/console")).text()).find((path) => path.endsWith(".js")) ?? "";
    const plain = new Uint8Array(await (await get(script)).arrayBuffer());
    const zipped = await get(script, { "accept-encoding": "gzip, deflate, br" });
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    expect(zipped.headers.get("vary")).toBe("accept-encoding");
    // Read raw: Bun's Response does not unpack a body it did not fetch.
    const body = new Uint8Array(await zipped.arrayBuffer());
    expect(body.length).toBeLessThanOrEqual(plain.length / 3);
    expect(Bun.gunzipSync(body)).toEqual(plain);
  });

  test("an unknown asset is a 404 in the error shape", async () => {
    const answer = await app.call("GET", "/console/assets/nothing-12345678.js");
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({
      errorType: "not_found",
      message: "no console asset 'nothing-12345678.js'",
    });
  });
});

describe("the console's build", () => {
  test("runs on the first request only, once for requests that arrive together, and again after a failure", async () => {
    let builds = 0;
    let source = "/nonexistent/console";
    const routes = consoleRoutes(() => {
      builds++;
      return buildConsole(source);
    });
    const server = new Elysia().use(errorPlugin(createLogger("silent"), 1024)).use(routes);
    const page = () => server.handle(new Request("http://test.local/console"));
    expect(builds).toBe(0); // an API that no one opens the console of never builds it

    const failed = await page();
    expect(failed.status).toBe(500);
    expect(((await failed.json()) as { errorType: string }).errorType).toBe("internal");
    expect(builds).toBe(1);

    source = `${import.meta.dir}/../../console`;
    const answers = await Promise.all([page(), page(), page()]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(builds).toBe(2);
    await page();
    expect(builds).toBe(2);
  });
});
