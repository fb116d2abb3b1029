/**
 * Refuses a WebSocket upgrade asked of a route that is not a WebSocket endpoint, with 400 in the
 * error shape, before the route runs: without this a plain GET route would answer the upgrade as
 * an ordinary request (a GraphQL GET without a query, say), which tells the client nothing.
 * `/graphql/subscriptions` (api/live/live-routes.ts) is a WebSocket route: the route table lets
 * its upgrades through.
 */
import { Elysia } from "elysia";
import { BadRequestError } from "../../common/errors.ts";
import { type RouteEntry, takesWebSocket } from "./route-table.ts";

export function upgradeGuard(routes: () => readonly RouteEntry[]) {
  return new Elysia({ name: "upgrade-guard" }).onRequest(({ request }) => {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return;
    const path = new URL(request.url).pathname;
    if (takesWebSocket(routes(), path)) return;
    throw new BadRequestError(`${path} is not a WebSocket endpoint: the upgrade is refused`);
  });
}
