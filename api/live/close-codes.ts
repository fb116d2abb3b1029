/**
 * Every WebSocket close code the live-subscription endpoint sends, in one table: the code, the
 * reason text and when. The 44xx codes are graphql-ws's (`graphql-transport-ws`); the older
 * `graphql-ws` protocol (subscriptions-transport-ws) defined none, so it is closed with the same
 * codes for the same causes. 4499 is the graphql-ws client's own (it closes with it on
 * `terminate()`); the server never sends it.
 */

export const CLOSE = {
  /** A client message that is not JSON, not an object, of an unknown type or of the wrong shape. */
  invalidMessage: { code: 4400, reason: "Invalid message received" },
  /** No token in `connection_init` nor the upgrade request; or a subscribe before `connection_ack`. */
  unauthorized: { code: 4401, reason: "Unauthorized" },
  /** The token is invalid, expired, revoked or its user deactivated (at init or at a later re-check). */
  forbidden: { code: 4403, reason: "Forbidden" },
  /** Neither subprotocol was offered in `Sec-WebSocket-Protocol`. */
  subprotocolNotAcceptable: { code: 4406, reason: "Subprotocol not acceptable" },
  /** No `connection_init` within LIVE_INIT_TIMEOUT_MS. */
  initTimeout: { code: 4408, reason: "Connection initialisation timeout" },
  /** A subscribe with an id already in use on the connection. */
  duplicateId: { code: 4409, reason: "Subscriber already exists" },
  /** A second `connection_init`. */
  tooManyInits: { code: 4429, reason: "Too many initialisation requests" },
  /** The token already holds LIVE_MAX_CONNECTIONS_PER_TOKEN connections (on this process). */
  tooManyConnections: { code: 4429, reason: "Too many connections for this token" },
  /** The server failed on something of its own. */
  internalError: { code: 4500, reason: "Internal server error" },
  /** The client's `connection_terminate` (older protocol). */
  normal: { code: 1000, reason: "Normal closure" },
  /** The API process is shutting down: reconnect (to another process). */
  goingAway: { code: 1001, reason: "Server shutting down" },
  /** The socket's send buffer passed LIVE_MAX_BUFFERED_BYTES: the client reads too slowly. */
  slowClient: { code: 1013, reason: "Send buffer full: the client reads too slowly" },
} as const;

/** One row of the table. Bun itself closes a message over LIVE_MAX_MESSAGE_BYTES with 1009. */
export type CloseCause = (typeof CLOSE)[keyof typeof CLOSE];
