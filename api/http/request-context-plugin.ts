/**
 * Every request in its context: an id (the client's `X-Request-Id` when sane, else a new one)
 * that every log line the request causes carries and its answer returns in `X-Request-Id`; its
 * latency, route template and status observed for the metrics; a `request` line at debug level.
 * Registered first, so it surrounds everything else, error answers included.
 */
import { Elysia } from "elysia";
import type { Logger } from "../../common/log.ts";
import { requestIdFrom, runInRequestContext } from "../../common/request-context.ts";
import { type ObserveRequest, UNMATCHED_ROUTE } from "./http-metrics.ts";

const REQUEST_ID_HEADER = "x-request-id";

/** `response` carrying `requestId`; a copy when its headers are immutable (a fetched or static answer). */
function withRequestId(response: Response, requestId: string): Response {
  try {
    response.headers.set(REQUEST_ID_HEADER, requestId);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    copy.headers.set(REQUEST_ID_HEADER, requestId);
    return copy;
  }
}

export function requestContextPlugin(log: Logger, observe: ObserveRequest) {
  // The template each request matched, noted by the hooks below (routing happens inside the handler).
  const routes = new WeakMap<Request, string>();

  /** Answers `request` by `handle` inside its context, observed and marked with its id. */
  const serve = (request: Request, handle: () => Response | Promise<Response>): Promise<Response> => {
    const requestId = requestIdFrom(request.headers.get(REQUEST_ID_HEADER));
    return runInRequestContext({ requestId }, async () => {
      const started = performance.now();
      const response = await handle();
      const seconds = (performance.now() - started) / 1000;
      const route = routes.get(request) ?? UNMATCHED_ROUTE;
      observe(request.method, route, response.status, seconds);
      log.debug("request", { method: request.method, route, status: response.status, seconds });
      return withRequestId(response, requestId);
    });
  };

  return (
    new Elysia({ name: "request-context" })
      // The one hook around the whole handling (onRequest's hooks, routing, errors): the context must
      // be entered before anything runs and left after, which an onRequest hook cannot do.
      .wrap(
        (handle, request) =>
          (...args: unknown[]) =>
            serve(
              request,
              () => handle(...args) as unknown as Response | Promise<Response>,
            ) as unknown as ReturnType<typeof handle>,
      )
      .onTransform({ as: "global" }, ({ request, route }) => {
        routes.set(request, route);
      })
      // Parse failures and thrown errors skip onTransform; their context still names the route, if any.
      .onError({ as: "global" }, ({ request, route }) => {
        if (route) routes.set(request, route);
      })
  );
}
