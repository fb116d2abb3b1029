/**
 * `GET /graphql/subscriptions`: the WebSocket endpoint of live subscriptions. The subprotocol is
 * chosen from `Sec-WebSocket-Protocol` at the upgrade (`graphql-transport-ws` first, then the
 * older `graphql-ws`); a socket offering neither is closed with 4406 once open. Each socket's
 * messages go to its connection (live-connection.ts); this file only binds the two.
 */
import type { ServerWebSocket } from "bun";
import { Elysia } from "elysia";
import { chooseProtocol } from "./client-message.ts";
import { CLOSE } from "./close-codes.ts";
import type { LiveConnection } from "./live-connection.ts";
import type { LiveService } from "./live-service.ts";

const LIVE_PATH = "/graphql/subscriptions";

export function liveRoutes(live: LiveService) {
  const connections = new WeakMap<object, LiveConnection>();
  return new Elysia({ name: "live-subscriptions" }).ws(LIVE_PATH, {
    // Not a REST operation: OpenAPI has no words for a WebSocket (README describes the endpoint).
    detail: { hide: true },
    upgrade({ request, set }) {
      const protocol = chooseProtocol(request.headers.get("sec-websocket-protocol"));
      if (protocol) set.headers["sec-websocket-protocol"] = protocol;
    },
    open(ws) {
      const { request } = ws.data as { request: Request };
      const protocol = chooseProtocol(request.headers.get("sec-websocket-protocol"));
      const raw = ws.raw as ServerWebSocket<unknown>;
      if (!protocol)
        return live.refuse(raw, CLOSE.subprotocolNotAcceptable.code, CLOSE.subprotocolNotAcceptable.reason);
      connections.set(raw, live.connect(protocol, raw, request.headers.get("authorization")));
    },
    message(ws, message) {
      connections.get(ws.raw)?.receive(message);
    },
    close(ws) {
      connections.get(ws.raw)?.closed();
      connections.delete(ws.raw);
    },
  });
}
