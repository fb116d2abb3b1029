/**
 * The CORS shell (cors.ts holds the rules): answers every OPTIONS request itself (a preflight by
 * the policy, a plain OPTIONS with `Allow`), and gives every other answer, errors included, its
 * CORS headers. Registered first, so even a 413 refused before routing is readable cross-origin.
 */
import { Elysia } from "elysia";
import { InsufficientAccessError, MethodNotAllowedError, NotFoundError } from "../../common/errors.ts";
import { answerPreflight, type CorsPolicy, corsResponseHeaders } from "./cors.ts";
import { methodsAt, type RouteEntry } from "./route-table.ts";

export function corsPlugin(policy: CorsPolicy, routes: () => readonly RouteEntry[]) {
  return new Elysia({ name: "cors" }).onRequest(({ request, set }) => {
    const origin = request.headers.get("origin");
    Object.assign(set.headers, corsResponseHeaders(policy, origin));
    if (request.method !== "OPTIONS") return;
    const methods = methodsAt(routes(), new URL(request.url).pathname);
    if (methods.length === 0) throw new NotFoundError("no such endpoint");
    const method = request.headers.get("access-control-request-method");
    if (origin === null || method === null) {
      return new Response(null, { status: 204, headers: { allow: methods.join(", ") } });
    }
    const preflight = { origin, method, headers: request.headers.get("access-control-request-headers") };
    const answer = answerPreflight(policy, preflight, methods);
    if (answer.allowed) return new Response(null, { status: 204, headers: answer.headers });
    if (answer.reason === "method") throw new MethodNotAllowedError(answer.message, methods);
    throw new InsufficientAccessError(answer.message);
  });
}
