/**
 * The app's registered routes (Elysia's `app.routes`: method + path template) in, what a concrete
 * path allows out: the methods for `Allow` (405 answers, OPTIONS, CORS preflights) and whether it
 * takes WebSocket upgrades. Pure; the router itself stays Elysia's.
 */

/** One registered route as Elysia lists it: `GET` + `/webhooks/:id`; WebSocket routes have method `WS`. */
export interface RouteEntry {
  method: string;
  path: string;
}

const segmentsOf = (path: string) => path.split("/").filter((segment) => segment !== "");

/** Whether a concrete path fits a template: `:name` takes one segment, a trailing `*` the rest. */
export function pathMatches(template: string, path: string): boolean {
  const wanted = segmentsOf(template);
  const given = segmentsOf(path);
  for (let i = 0; i < wanted.length; i++) {
    const segment = wanted[i] as string;
    if (segment === "*") return true;
    const actual = given[i];
    if (actual === undefined) return false;
    if (!segment.startsWith(":") && segment !== actual) return false;
  }
  return wanted.length === given.length;
}

/**
 * The HTTP methods registered for `path`, upper case, sorted, with `HEAD` beside `GET` (Elysia
 * answers it) and `OPTIONS` when there is any (the CORS plugin answers it). Empty: no such path.
 */
export function methodsAt(routes: readonly RouteEntry[], path: string): string[] {
  const methods = new Set<string>();
  for (const route of routes) {
    const method = route.method.toUpperCase();
    if (method === "WS" || !pathMatches(route.path, path)) continue;
    if (method === "ALL") return ["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"];
    methods.add(method);
    if (method === "GET") methods.add("HEAD");
  }
  if (methods.size > 0) methods.add("OPTIONS");
  return [...methods].sort();
}

/** Whether `path` has a WebSocket route (only those may be upgraded). */
export function takesWebSocket(routes: readonly RouteEntry[], path: string): boolean {
  return routes.some((route) => route.method.toUpperCase() === "WS" && pathMatches(route.path, path));
}
