/**
 * A message as the socket delivered it (JSON already decoded where it parsed, else the text) →
 * the client message it is in either subprotocol, or null when it is not a valid one (the
 * connection is then closed with 4400). Pure. The two protocols' client messages map onto one
 * vocabulary: `start`/`stop` of the older protocol are `subscribe`/`complete` here.
 */

/** The two subprotocols, as offered in `Sec-WebSocket-Protocol`, preferred first. */
export const LIVE_PROTOCOLS = ["graphql-transport-ws", "graphql-ws"] as const;
export type LiveProtocol = (typeof LIVE_PROTOCOLS)[number];

/** What a subscribe asks for (the GraphQL request of the subscription). */
export interface SubscribeRequest {
  query: string;
  variables: Record<string, unknown> | null;
  operationName: string | null;
}

export type ClientMessage =
  | { type: "connection_init"; payload: Record<string, unknown> | null }
  | { type: "ping"; payload: Record<string, unknown> | null }
  | { type: "pong" }
  | { type: "subscribe"; id: string; request: SubscribeRequest }
  | { type: "complete"; id: string }
  | { type: "terminate" };

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** An optional object member: absent or null → null; anything else but an object → undefined (invalid). */
function optionalObject(value: unknown): Json | null | undefined {
  if (value === undefined || value === null) return null;
  return isObject(value) ? value : undefined;
}

const isId = (value: unknown): value is string => typeof value === "string" && value.length > 0;

function subscribeRequest(payload: unknown): SubscribeRequest | null {
  if (!isObject(payload) || typeof payload.query !== "string") return null;
  const variables = optionalObject(payload.variables);
  const name = payload.operationName;
  if (variables === undefined) return null;
  if (name !== undefined && name !== null && typeof name !== "string") return null;
  return { query: payload.query, variables, operationName: name ?? null };
}

/** The client message `raw` is in `protocol`; null when it is not one. */
export function decodeClientMessage(protocol: LiveProtocol, raw: unknown): ClientMessage | null {
  if (!isObject(raw) || typeof raw.type !== "string") return null;
  const { type } = raw;
  if (type === "connection_init") {
    const payload = optionalObject(raw.payload);
    return payload === undefined ? null : { type, payload };
  }
  if (protocol === "graphql-transport-ws") {
    if (type === "ping") {
      const payload = optionalObject(raw.payload);
      return payload === undefined ? null : { type, payload };
    }
    if (type === "pong") return optionalObject(raw.payload) === undefined ? null : { type };
    if (type === "subscribe" || type === "complete") {
      if (!isId(raw.id)) return null;
      if (type === "complete") return { type, id: raw.id };
      const request = subscribeRequest(raw.payload);
      return request ? { type, id: raw.id, request } : null;
    }
    return null;
  }
  if (type === "start") {
    const request = subscribeRequest(raw.payload);
    return isId(raw.id) && request ? { type: "subscribe", id: raw.id, request } : null;
  }
  if (type === "stop") return isId(raw.id) ? { type: "complete", id: raw.id } : null;
  if (type === "connection_terminate") return { type: "terminate" };
  return null;
}

/** The subprotocol to speak, from the offered `Sec-WebSocket-Protocol` list; null when neither is offered. */
export function chooseProtocol(offered: string | null): LiveProtocol | null {
  const names = (offered ?? "").split(",").map((name) => name.trim());
  return LIVE_PROTOCOLS.find((protocol) => names.includes(protocol)) ?? null;
}
