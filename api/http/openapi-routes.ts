/**
 * The REST API's OpenAPI 3.1 document at `GET /openapi.json`, made by @elysiajs/openapi's generator
 * from the app's routes and their `detail` (route-doc.ts), and a rendered page at `GET /openapi`
 * (Swagger UI, served from the swagger-ui-dist package: no CDN). Public: they describe the API,
 * not a tenant. The generator drops an operation's own query parameters when its path has path
 * parameters, so they are put back here.
 */
import { createRequire } from "node:module";
import { toOpenAPISchema } from "@elysiajs/openapi";
import { Elysia } from "elysia";

/** The operations of one path item, by lower-case method. */
type PathItem = Record<string, { parameters?: { name: string; in: string }[] } & Record<string, unknown>>;

const { resolve } = createRequire(import.meta.url);

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Tenant data service — REST API</title>
  <link rel="stylesheet" href="/openapi/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/openapi/swagger-ui-bundle.js"></script>
  <script src="/openapi/swagger-ui-init.js"></script>
</body>
</html>
`;

// A file of its own, so the page needs no inline script.
const INIT = `window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui" });\n`;

const hidden = { detail: { hide: true } };

/** A registered route with its hooks, as `app.routes` lists it. */
interface DocumentedRoute {
  method: string;
  path: string;
  hooks?: { detail?: unknown };
}

/** `routes` are the app's (read on the first request for the document). */
export function openapiRoutes(
  info: { title: string; version: string; description: string },
  routes: () => readonly DocumentedRoute[],
) {
  let document: Record<string, unknown> | undefined;

  /** Puts back the query parameters the generator dropped beside generated path parameters. */
  function withRouteParameters(paths: Record<string, PathItem>) {
    for (const route of routes()) {
      const own = (route.hooks?.detail as { parameters?: { name: string; in: string }[] } | undefined)
        ?.parameters;
      const path = route.path.replace(/:([^/]+)/g, "{$1}");
      const operation = paths[path]?.[route.method.toLowerCase()];
      if (!own || !operation) continue;
      const generated = (operation.parameters ?? []).filter(
        (p) => !own.some((o) => o.name === p.name && o.in === p.in),
      );
      operation.parameters = [...generated, ...own];
    }
    return paths;
  }

  const docs = new Elysia({ name: "openapi" })
    .get(
      "/openapi.json",
      () => {
        // Routes are all registered before the first request, so the document is made once.
        document ??= (() => {
          const { paths, components } = toOpenAPISchema(docs, undefined, undefined, undefined, "3.1.1");
          return {
            openapi: "3.1.1",
            info,
            paths: withRouteParameters(paths as Record<string, PathItem>),
            components: {
              ...components,
              securitySchemes: {
                bearer: { type: "http", scheme: "bearer", description: "An API token (SPEC.md §1)" },
              },
            },
            security: [{ bearer: [] }],
          };
        })();
        return document;
      },
      hidden,
    )
    .get(
      "/openapi",
      () => new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } }),
      hidden,
    )
    .get(
      "/openapi/swagger-ui-init.js",
      () => new Response(INIT, { headers: { "content-type": "text/javascript; charset=utf-8" } }),
      hidden,
    )
    .get(
      "/openapi/swagger-ui-bundle.js",
      () => Bun.file(resolve("swagger-ui-dist/swagger-ui-bundle.js")),
      hidden,
    )
    .get("/openapi/swagger-ui.css", () => Bun.file(resolve("swagger-ui-dist/swagger-ui.css")), hidden);
  return docs;
}
