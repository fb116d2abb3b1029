/**
 * `GET /console` (the browser console's page) and `GET /console/assets/{name}` (its scripts, styles,
 * fonts, workers). No auth: the page holds no data; the calls it makes carry the signed-in token.
 *
 * The bundle is built on the first request, in memory, and kept (build-console.ts): an API that no
 * one opens the console of never pays for the build, and a failed build is tried again on the next
 * request. The page is revalidated on each load (its ETag); assets are named by content hash and kept
 * by the browser for a year.
 */
import { Elysia } from "elysia";
import { NotFoundError } from "../../common/errors.ts";
import { buildConsole, CONSOLE_ASSETS_PATH, CONSOLE_PATH, type ConsoleBundle } from "./build-console.ts";
import { serveConsoleFile } from "./console-file.ts";

/**
 * What the page may do: its own scripts, workers and API calls only. Monaco and GraphiQL set inline
 * styles, and GraphiQL's fonts and icons are data: URLs. No framing (the tab holds a token).
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self'",
  "connect-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE_HEADERS = {
  "cache-control": "no-cache",
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
};
const ASSET_HEADERS = {
  "cache-control": "public, max-age=31536000, immutable",
  "x-content-type-options": "nosniff",
};

/** The console is a page, not part of the REST API: its routes stay out of the OpenAPI document. */
const PAGE_ROUTE = { detail: { hide: true } };

/** `build` makes the bundle (default: console/ with Bun.build); called once, again only after a failure. */
export function consoleRoutes(build: () => Promise<ConsoleBundle> = buildConsole) {
  let bundle: Promise<ConsoleBundle> | null = null;
  const current = () => {
    bundle ??= build().catch((error: unknown) => {
      bundle = null;
      throw error;
    });
    return bundle;
  };
  const page = async ({ request }: { request: Request }) =>
    serveConsoleFile((await current()).page, request, PAGE_HEADERS);

  return new Elysia({ name: "console-routes" })
    .get(CONSOLE_PATH, page, PAGE_ROUTE)
    .get(`${CONSOLE_PATH}/`, page, PAGE_ROUTE)
    .get(
      `${CONSOLE_ASSETS_PATH}:name`,
      async ({ params, request }) => {
        const asset = (await current()).assets.get(params.name);
        if (!asset) throw new NotFoundError(`no console asset '${params.name}'`);
        return serveConsoleFile(asset, request, ASSET_HEADERS);
      },
      PAGE_ROUTE,
    );
}
